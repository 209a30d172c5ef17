// Checkpoints and what they belong to: a resume compares the network's
// description and every array's name, shape and type before reading
// anything, and a mismatch is the same error on every rank (not a damaged
// checkpoint skipped), with nothing in the directory written, removed or
// renamed; a load that fails leaves the replicated entries as they were;
// a directory where no checkpoint loads is an error, not a fresh start; a
// file whose name and step disagree does not load; a save never removes
// or replaces a checkpoint of another network, nor goes back behind a
// newer one of its own.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/checkpoint.h"
#include "io/checksum.h"
#include "io/h5_file.h"
#include "tests/mpi_testing.h"

namespace distconv::io {
namespace {

namespace fs = std::filesystem;
using testing::expect_error_on_all_ranks;
using testing::temp_path;
using testing::world_rank;
using testing::world_size;

// A small network's state: weights of `width` values, momentum, the step,
// a generator's state and a distributed field.
struct Net {
  Net(const ProcessGrid& grid, Index width, int seed,
      const std::string& name = "net: width")
      : field(grid, HaloLayout(Distribution(Shape{2, 3, 4, 5}, grid.shape()))),
        description(name + " " + std::to_string(width)) {
    w.assign(static_cast<std::size_t>(width), 0.0f);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = seed * 10.0f + i;
    momentum.assign(4, seed * 0.5);
    step = seed;
    rng = "state " + std::to_string(seed);
    const Shape lower = field.shard().lower;
    field.interior().for_each(
        [&](const Shape& i, float& v) { v = seed + (i + lower)[2] * 0.5f; });
  }
  CheckpointState state() {
    CheckpointState s;
    s.describe(description);
    s.add("w", &w);
    s.add("momentum", &momentum);
    s.add("step", &step);
    s.add("rng", &rng);
    s.add("field", &field);
    return s;
  }
  std::vector<float> w;
  std::vector<double> momentum;
  std::int64_t step = 0;
  std::string rng;
  DistTensor<float> field;
  std::string description;
};

// Every file of `dir` and its bytes (read on every rank).
std::map<std::string, std::string> contents(const std::string& dir) {
  MPI_Barrier(MPI_COMM_WORLD);
  std::map<std::string, std::string> all;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    all[e.path().filename().string()] =
        std::string((std::istreambuf_iterator<char>(in)), {});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return all;
}

ProcessGrid make_grid() {
  return ProcessGrid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
}

TEST(CheckpointResume, AnotherNetworkIsAnErrorNamingWhatDiffers) {
  const std::string dir = temp_path("another_network");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Net saved(grid, 10, 1);
  ckpt.save(2, saved.state());
  ckpt.save(4, saved.state());
  const auto before = contents(dir);

  // Wider weights: not read (the old code read 10 values into them).
  Net wider(grid, 12, 0);
  CheckpointState s = wider.state();
  std::string message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch, "belongs to another network",
      [&] { ckpt.load_latest(s); });
  EXPECT_NE(message.find("'net: width 10'"), std::string::npos) << message;
  EXPECT_NE(message.find("entry 'w': float32 array of 10 there, float32 "
                         "array of 12 here"),
            std::string::npos)
      << message;
  EXPECT_EQ(wider.w, Net(grid, 12, 0).w);
  EXPECT_EQ(contents(dir), before);

  // Another description, the same arrays.
  Net renamed(grid, 10, 0, "other net: width");
  s = renamed.state();
  message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "written for 'net: width 10', this run is 'other net: width 10'",
      [&] { ckpt.load(4, s); });
  // An entry more, an entry fewer.
  std::int64_t extra = 0;
  s = saved.state();
  s.add("data.position", &extra);
  message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "entry 'data.position': int64 here, not in the checkpoint",
      [&] { ckpt.load_latest(s); });
  CheckpointState fewer;
  fewer.describe(saved.description);
  fewer.add("w", &saved.w);
  message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "entry 'field': float32 tensor 2x3x4x5 there, not in this run",
      [&] { ckpt.load_latest(fewer); });
  EXPECT_EQ(contents(dir), before);

  // A save of that other network there is refused before anything is
  // written, removed or renamed.
  message = expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
                                      "belongs to another network",
                                      [&] { ckpt.save(6, wider.state()); });
  EXPECT_EQ(contents(dir), before);
  // The right network loads.
  Net loaded(grid, 10, 0);
  s = loaded.state();
  EXPECT_EQ(ckpt.load_latest(s), std::optional<std::int64_t>(4));
  EXPECT_EQ(loaded.w, saved.w);
}

TEST(CheckpointResume, AFailedLoadLeavesTheReplicatedEntries) {
  const std::string dir = temp_path("failed_load");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Net saved(grid, 10, 3);
  ckpt.save(7, saved.state());
  // Damage "momentum" (read after "w"): 1.5 -> another value.
  if (world_rank() == 0) {
    std::fstream f(ckpt.path(7),
                   std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), {});
    const double value = 1.5;
    const std::size_t at =
        bytes.find(std::string(reinterpret_cast<const char*>(&value), 8));
    ASSERT_NE(at, std::string::npos);
    f.seekp(static_cast<std::streamoff>(at + 7));
    f.put(static_cast<char>(bytes[at + 7] ^ 0x10));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Net loaded(grid, 10, 0);
  CheckpointState s = loaded.state();
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "does not match its checksum",
                            [&] { ckpt.load(7, s); });
  EXPECT_EQ(loaded.w, Net(grid, 10, 0).w);
  EXPECT_EQ(loaded.step, 0);
  EXPECT_EQ(loaded.rng, "state 0");
}

TEST(CheckpointResume, NoCheckpointLoadingIsAnError) {
  const std::string dir = temp_path("none_loads");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Net saved(grid, 10, 1);
  ckpt.save(1, saved.state());
  ckpt.save(2, saved.state());
  if (world_rank() == 0) {  // both cut short
    for (int step : {1, 2}) fs::resize_file(ckpt.path(step), 1000);
  }
  const auto before = contents(dir);
  Net loaded(grid, 10, 0);
  CheckpointState s = loaded.state();
  const std::string message = expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "none of the 2 checkpoints",
      [&] { ckpt.load_latest(s); });
  EXPECT_NE(message.find("step-00000002.h5"), std::string::npos) << message;
  EXPECT_NE(message.find("step-00000001.h5"), std::string::npos) << message;
  EXPECT_EQ(contents(dir), before);
  // An empty directory: nothing to resume from.
  CheckpointDir empty(MPI_COMM_WORLD, temp_path("none_there"));
  EXPECT_EQ(empty.load_latest(s), std::nullopt);
}

TEST(CheckpointResume, ANameAndStepThatDisagreeDoNotLoad) {
  const std::string dir = temp_path("renamed");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Net one(grid, 10, 1), two(grid, 10, 2);
  ckpt.save(1, one.state());
  ckpt.save(2, two.state());
  if (world_rank() == 0) fs::copy_file(ckpt.path(2), ckpt.path(9));
  MPI_Barrier(MPI_COMM_WORLD);
  Net loaded(grid, 10, 0);
  CheckpointState s = loaded.state();
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "holds step 2, not step 9 as its name says",
                            [&] { ckpt.load(9, s); });
  std::vector<std::string> skipped;
  EXPECT_EQ(ckpt.load_latest(s, &skipped), std::optional<std::int64_t>(2));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("step-00000009.h5"), std::string::npos);
  EXPECT_EQ(loaded.w, two.w);
}

TEST(CheckpointResume, SavesKeepOtherRunsAndDamagedFiles) {
  const std::string dir = temp_path("saves");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir, CheckpointOptions{2});
  Net net(grid, 10, 1);
  for (int step : {10, 20, 30}) ckpt.save(step, net.state());
  EXPECT_EQ(ckpt.steps(), (std::vector<std::int64_t>{20, 30}));
  // Going back behind a newer checkpoint of the same network (a run
  // started again without resuming) would prune the new one at once.
  auto before = contents(dir);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kState,
                            "already holds step-00000030.h5",
                            [&] { ckpt.save(5, net.state()); });
  EXPECT_EQ(contents(dir), before);
  // A damaged checkpoint is never removed by a save (it may be a good one
  // read badly); the save at its step replaces it.
  if (world_rank() == 0) fs::resize_file(ckpt.path(20), 100);
  ckpt.save(40, net.state());
  ckpt.save(50, net.state());
  EXPECT_EQ(ckpt.steps(), (std::vector<std::int64_t>{20, 40, 50}));
  before = contents(dir);
  EXPECT_EQ(before.at("step-00000020.h5").size(), 100u);
}

// A checkpoint of the first format (no manifest, as its save wrote it):
// compared by its datasets' names, shapes and types.
TEST(CheckpointResume, ComparesAFirstFormatCheckpointByItsDatasets) {
  const std::string dir = temp_path("first_format");
  const ProcessGrid grid = make_grid();
  CheckpointDir ckpt(MPI_COMM_WORLD, dir);
  Net saved(grid, 10, 5);
  {
    H5File f(MPI_COMM_WORLD, ckpt.path(3), H5Mode::kCreate);
    f.set_attribute("/", "format", std::string("distconv checkpoint 1"));
    f.set_attribute("/", "step", std::int64_t{3});
    const auto sum = [](std::uint64_t s) {
      std::int64_t v;
      std::memcpy(&v, &s, sizeof(v));
      return v;
    };
    const auto* rng = reinterpret_cast<const std::uint8_t*>(saved.rng.data());
    const Index n = static_cast<Index>(saved.rng.size());
    f.write("w", Shape{10}, saved.w.data());
    f.set_attribute("w", "checksum", sum(checksum(saved.w.data(), Shape{10})));
    f.write("momentum", Shape{4}, saved.momentum.data());
    f.set_attribute("momentum", "checksum",
                    sum(checksum(saved.momentum.data(), Shape{4})));
    f.write("step", Shape{1}, &saved.step);
    f.set_attribute("step", "checksum", sum(checksum(&saved.step, Shape{1})));
    f.write("rng", Shape{n}, rng);
    f.set_attribute("rng", "checksum", sum(checksum(rng, Shape{n})));
    f.write("field", saved.field);
    f.set_attribute("field", "checksum", sum(checksum(saved.field)));
    f.close();
  }
  Net wider(grid, 11, 0);
  CheckpointState s = wider.state();
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kShapeMismatch,
      "entry 'w': float32 array of 10 there, float32 array of 11 here",
      [&] { ckpt.load_latest(s); });
  Net loaded(grid, 10, 0, "any description");
  s = loaded.state();
  EXPECT_EQ(ckpt.load_latest(s), std::optional<std::int64_t>(3));
  EXPECT_EQ(loaded.w, saved.w);
  EXPECT_EQ(loaded.rng, saved.rng);
  EXPECT_EQ(loaded.step, 5);
}

}  // namespace
}  // namespace distconv::io
