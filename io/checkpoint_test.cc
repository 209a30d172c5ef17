// Checkpoints: saved on one grid and loaded on another (and on fewer
// ranks), bitwise; only the newest `keep` stay; an interrupted save (its
// .tmp left behind) and a corrupted checkpoint leave the last good one
// loadable; mismatched entries give the same error on every rank.
#include "io/checkpoint.h"

#include <mpi.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/mpi_testing.h"

namespace distconv::io {
namespace {

using testing::expect_error_on_all_ranks;
using testing::temp_path;
using testing::world_rank;
using testing::world_size;

// A training state: weights, momentum, step, a generator's state, a
// distributed 3D field and bfloat16 activations, with values that depend
// on `seed`.
struct Model {
  Model(const ProcessGrid& grid, int seed)
      : field(grid, HaloLayout(Distribution(Shape{2, 3, 5, 4, 7}, grid.shape()),
                               HaloWidths::symmetric(Shape{0, 0, 1, 1, 1}))),
        activations(grid, HaloLayout(Distribution(Shape{2, 3, 5, 4, 7},
                                                  grid.shape()))) {
    w.resize(10);
    momentum.resize(6);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = seed * 100.0f + i;
    for (std::size_t i = 0; i < momentum.size(); ++i)
      momentum[i] = seed - 0.5 * i;
    step = seed * 7;
    rng =
        "mt19937 state " + std::to_string(seed) + std::string(1, '\0') + "end";
    const Shape lower = field.shard().lower;
    field.interior().for_each([&](const Shape& i, float& v) {
      const Shape g = i + lower;
      v = seed + 0.25f * (g[0] + 2 * g[1] + 3 * g[2] + 5 * g[3] + 7 * g[4]);
    });
    activations.interior().for_each([&](const Shape& i, bf16& v) {
      const Shape g = i + lower;
      v = seed - 0.1f * (g[0] + 2 * g[1] + 3 * g[2] + 5 * g[3] + 7 * g[4]);
    });
  }
  CheckpointState state() {
    CheckpointState s;
    s.add("w", &w);
    s.add("momentum", &momentum);
    s.add("step", &step);
    s.add("rng", &rng);
    s.add("field", &field);
    s.add("activations", &activations);
    return s;
  }
  bool operator==(const Model& o) const {
    if (w != o.w || momentum != o.momentum || step != o.step || rng != o.rng) {
      return false;
    }
    long long wrong = 0;
    std::vector<float> mine;
    field.interior().for_each(
        [&](const Shape&, const float& v) { mine.push_back(v); });
    std::size_t k = 0;
    o.field.interior().for_each([&](const Shape&, const float& v) {
      if (k >= mine.size() || mine[k++] != v) ++wrong;
    });
    std::vector<std::uint16_t> bits;
    activations.interior().for_each(
        [&](const Shape&, const bf16& v) { bits.push_back(v.bits()); });
    k = 0;
    o.activations.interior().for_each([&](const Shape&, const bf16& v) {
      if (k >= bits.size() || bits[k++] != v.bits()) ++wrong;
    });
    return wrong == 0;
  }

  std::vector<float> w;
  std::vector<double> momentum;
  std::int64_t step = 0;
  std::string rng;
  DistTensor<float> field;
  DistTensor<bf16> activations;
};

TEST(Checkpoint, RestartsOnAnotherGridAndOnFewerRanks) {
  const int n = world_size();
  const std::string dir = temp_path("restart");
  ProcessGrid a(MPI_COMM_WORLD, Shape{1, 1, n, 1, 1});
  Model saved(a, 3);
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  ckpt.save(12, saved.state());
  EXPECT_EQ(ckpt.steps(), std::vector<std::int64_t>{12});
  // Another split of the same ranks.
  ProcessGrid b(MPI_COMM_WORLD, Shape{1, 1, 1, 1, n});
  Model loaded(b, 0);
  CheckpointState s = loaded.state();
  EXPECT_EQ(ckpt.load_latest(s), std::optional<std::int64_t>(12));
  Model want(b, 3);  // the saved values, made on this grid
  EXPECT_TRUE(loaded == want);
  // The first half of the ranks (at least one) alone.
  const int fewer = (n + 1) / 2;
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < fewer ? 0 : 1, world_rank(),
                 &sub);
  if (world_rank() < fewer) {
    ProcessGrid c(sub, Shape{1, 1, 1, fewer, 1});
    Model small(c, 0);
    CheckpointState t = small.state();
    CheckpointDir(sub, dir).load(12, t);
    EXPECT_TRUE(small == Model(c, 3));
  }
  MPI_Comm_free(&sub);
}

TEST(Checkpoint, KeepsTheNewestAndSurvivesAnInterruptedSave) {
  const std::string dir = temp_path("keep");
  ProcessGrid g(MPI_COMM_WORLD, Shape{world_size(), 1, 1, 1, 1});
  CheckpointDir ckpt(MPI_COMM_WORLD, dir, CheckpointOptions{2});
  for (int s = 1; s <= 3; ++s) {
    Model m(g, s);
    ckpt.save(s, m.state());
  }
  EXPECT_EQ(ckpt.steps(), (std::vector<std::int64_t>{2, 3}));
  // A save interrupted by a crash leaves its temporary file: half a
  // checkpoint of step 4.
  if (world_rank() == 0) {
    std::ifstream in(ckpt.path(3), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(ckpt.path(4) + ".tmp", std::ios::binary)
        << bytes.substr(0, bytes.size() / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Model loaded(g, 0);
  CheckpointState s = loaded.state();
  EXPECT_EQ(ckpt.load_latest(s), std::optional<std::int64_t>(3));
  EXPECT_TRUE(loaded == Model(g, 3));
  Model m5(g, 5);
  ckpt.save(5, m5.state());  // removes the leftover
  EXPECT_EQ(ckpt.steps(), (std::vector<std::int64_t>{3, 5}));
  std::ifstream gone(ckpt.path(4) + ".tmp");
  EXPECT_FALSE(gone.good());
}

// Saves the models of seeds 1 and 2 as steps 1 and 2, then flips the bits
// `mask` of one byte of step 2's file, at where(its bytes), on rank 0;
// every rank returns after that.
template <typename Where>
void save_two_and_damage_the_second(const ProcessGrid& g, CheckpointDir& ckpt,
                                    Where where, int mask) {
  Model m1(g, 1), m2(g, 2);
  ckpt.save(1, m1.state());
  ckpt.save(2, m2.state());
  if (world_rank() == 0) {
    std::fstream f(ckpt.path(2),
                   std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), {});
    const std::size_t at = where(bytes);
    ASSERT_LT(at, bytes.size());
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(bytes[at] ^ mask));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Checkpoint, SkipsACorruptedCheckpoint) {
  const std::string dir = temp_path("corrupt");
  ProcessGrid g(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1, 1});
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  // Flip one bit of the newest checkpoint's weights (w[3] = 203.0f).
  const float value = 203.0f;
  save_two_and_damage_the_second(
      g, ckpt,
      [&](const std::string& bytes) {
        return bytes.find(
            std::string(reinterpret_cast<const char*>(&value), 4));
      },
      1);
  Model loaded(g, 0);
  CheckpointState s = loaded.state();
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo,
      ckpt.path(2) + " does not match its checksum (damaged)",
      [&] { ckpt.load(2, s); });
  std::vector<std::string> skipped;
  EXPECT_EQ(ckpt.load_latest(s, &skipped), std::optional<std::int64_t>(1));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("does not match its checksum"), std::string::npos);
  EXPECT_TRUE(loaded == Model(g, 1));
}

// A bit flipped in the header's first line: the file is refused as
// damaged before HDF5 reads any of it (the checksum that guards HDF5's
// bytes is in the header), and the older checkpoint is loaded.
TEST(Checkpoint, RefusesAFileWhoseHeaderIsDamaged) {
  const std::string dir = temp_path("damaged_header");
  ProcessGrid g(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1, 1});
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  save_two_and_damage_the_second(
      g, ckpt, [](const std::string&) { return std::size_t{2}; }, 0x20);
  Model loaded(g, 0);
  CheckpointState s = loaded.state();
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo,
      ckpt.path(2) +
          " begins with neither a checkpoint header nor HDF5's signature "
          "(damaged)",
      [&] { ckpt.load(2, s); });
  EXPECT_EQ(ckpt.load_latest(s), std::optional<std::int64_t>(1));
  EXPECT_TRUE(loaded == Model(g, 1));
}

TEST(Checkpoint, MismatchesAreErrorsOnEveryRank) {
  const std::string dir = temp_path("mismatch");
  ProcessGrid g(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1, 1});
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Model m(g, 1);
  ckpt.save(1, m.state());
  // A field of another global shape.
  DistTensor<float> wide(
      g, HaloLayout(Distribution(Shape{2, 3, 6, 4, 7}, g.shape())));
  CheckpointState s;
  s.add("field", &wide);
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "entry 'field': float32 tensor 2x3x5x4x7 there, float32 tensor "
      "2x3x6x4x7 here",
      [&] { ckpt.load(1, s); });
  // An entry the checkpoint lacks.
  std::vector<float> extra;
  CheckpointState t;
  t.add("extra", &extra);
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "entry 'extra': float32 array of 0 here, not in the checkpoint",
      [&] { ckpt.load(1, t); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo, "step-00000009.h5",
                            [&] { ckpt.load(9, t); });
  EXPECT_THROW(t.add("extra", &extra), Error);
  EXPECT_THROW(t.add("a/b", &extra), Error);
  EXPECT_THROW(t.add(".manifest", &extra), Error);
  EXPECT_THROW(t.add("a\tb", &extra), Error);
  EXPECT_THROW(t.describe("two\nlines"), Error);
  std::vector<std::string> skipped;
  CheckpointDir empty(MPI_COMM_WORLD, temp_path("none"));
  EXPECT_EQ(empty.load_latest(t, &skipped), std::nullopt);
}

}  // namespace
}  // namespace distconv::io
