// The training state the checkpoint fuzz target and its corpus use: fixed
// values, so that a checkpoint that loads can be checked value by value.
#ifndef DISTCONV_IO_CHECKPOINT_FUZZ_STATE_H_
#define DISTCONV_IO_CHECKPOINT_FUZZ_STATE_H_

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "io/checkpoint.h"

namespace distconv::io {

struct FuzzState {
  // The saved values when `saved`, else others (what a load replaces).
  explicit FuzzState(bool saved)
      : grid(MPI_COMM_SELF, Shape{1, 1, 1, 1}),
        field(grid, HaloLayout(Distribution(Shape{2, 3, 4, 5}, grid.shape()))),
        w(37),
        momentum(5) {
    const float base = saved ? 1.0f : -7.0f;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = base + 0.25f * i;
    for (std::size_t i = 0; i < momentum.size(); ++i) {
      momentum[i] = base * 0.5 - i;
    }
    step = saved ? 42 : -1;
    rng = saved ? std::string("mt19937 state\0end", 17) : "none";
    field.interior().for_each([&](const Shape& i, float& v) {
      v = base + i[0] + 10 * i[1] + 100 * i[2] + 1000 * i[3];
    });
  }
  CheckpointState state() {
    CheckpointState s;
    s.describe("fuzz: w 37, field 2x3x4x5");
    s.add("w", &w);
    s.add("momentum", &momentum);
    s.add("step", &step);
    s.add("rng", &rng);
    s.add("field", &field);
    return s;
  }
  bool operator==(const FuzzState& o) const {
    bool same =
        w == o.w && momentum == o.momentum && step == o.step && rng == o.rng;
    field.interior().for_each([&](const Shape& i, const float& v) {
      same = same && v == o.field.interior()(i);
    });
    return same;
  }

  ProcessGrid grid;
  DistTensor<float> field;
  std::vector<float> w;
  std::vector<double> momentum;
  std::int64_t step = 0;
  std::string rng;
};

}  // namespace distconv::io

#endif  // DISTCONV_IO_CHECKPOINT_FUZZ_STATE_H_
