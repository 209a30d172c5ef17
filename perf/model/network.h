// A network as the performance model and the planner see it: units, each
// a short chain of operations run on one process grid, reading the
// outputs of earlier units. A unit is what the planner gives one grid
// (a conv-BN-ReLU block, a pooling, a decoder stage); between units whose
// grids differ, the tensor is redistributed.
//
//   Network net;
//   net.input_shape = {2, 18, 256, 256};
//   net.units.push_back({"enc1", {conv, bn, relu}, {kNetworkInput}});
//   net.units.push_back({"pool", {pool}, {0}});
//   ...
//   Prediction p = predict(net, {grid0, grid1, ...}, machine);
//   p.step_s();  p.units[i].cost.halo_s;
//
// Where a unit's input comes from another grid it arrives balanced over
// the unit's grid; from the same grid it keeps the producer's (maybe
// uneven) distribution. A unit with several inputs (a concatenation) takes
// the distribution of its first input on its own grid, and the other
// inputs are redistributed to it when they differ (what the segmentation
// example does for an uneven split).
#ifndef DISTCONV_PERF_MODEL_NETWORK_H_
#define DISTCONV_PERF_MODEL_NETWORK_H_

#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/shape.h"
#include "perf/model/machine.h"
#include "perf/model/op_cost.h"

namespace distconv {
namespace model {

inline constexpr int kNetworkInput = -1;

struct Unit {
  std::string name;
  std::vector<Op> ops;      // in order; ops[0] reads the unit's input
  std::vector<int> inputs;  // earlier units, or kNetworkInput
};

struct Network {
  std::string name;
  std::vector<Unit> units;  // each reads earlier units only
  // Throws kInvalidArgument naming the unit when a unit has no operations
  // or reads a later unit, when consecutive operations' shapes do not
  // chain, or when an input's shape does not fit the unit's first
  // operation (N and spatial equal; channels summed for a concat).
  void validate() const;
  Shape input_shape() const;          // the first unit's input
  Shape output_shape(int unit) const;  // its last operation's output
};

struct UnitCost {
  std::string name;
  Shape grid;
  Cost cost;  // its operations, plus moving its inputs onto its grid
};

struct Prediction {
  std::vector<UnitCost> units;
  Cost total;
  double step_s() const { return total.total(); }
};

// The modelled step of `net` with unit i on grids[i] (N x 1 x spatial, all
// with the same number of ranks).
Prediction predict(const Network& net, const std::vector<Shape>& grids,
                   const Machine& m);
// Every unit on one grid.
Prediction predict(const Network& net, const Shape& grid, const Machine& m);

// The distribution unit `unit` reads on `grid`: balanced, or the first
// input's output distribution when it comes from the same grid (`outputs`
// holds the earlier units' output distributions, `grids` their grids).
Distribution unit_input_distribution(const Network& net, int unit,
                                     const std::vector<Shape>& grids,
                                     const std::vector<Distribution>& outputs);

// `d`'s partitions with the channel dimension replaced by `channels` whole
// (the same split of another tensor of a concatenation).
Distribution with_channels(const Distribution& d, Index channels);

}  // namespace model
}  // namespace distconv

#endif  // DISTCONV_PERF_MODEL_NETWORK_H_
