// A disk that fills while files are written: a tmpfs (tests/small_disk.h)
// filled to leave from nothing to enough free, then an HDF5 file, a .npy
// file and a checkpoint written over earlier ones. At every level each
// write either succeeds (and reads back) or fails with the same Error(kIo)
// on every rank; no rank is left waiting in a collective (the test's time
// limit), nothing is left for MPI_Finalize to trip on (the test ends
// normally), and the earlier files are byte for byte as they were, with no
// partial file beside them.
#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/checkpoint.h"
#include "io/h5_file.h"
#include "io/npy_file.h"
#include "tests/mpi_testing.h"
#include "tests/small_disk.h"

namespace distconv::io {
namespace {

namespace fs = std::filesystem;
using testing::same_outcome_on_all_ranks;
using testing::SmallDisk;
using testing::world_rank;
using testing::world_size;

// Every file under `dir` but the filler, its size and a hash of its bytes.
std::map<std::string, std::string> contents(const std::string& dir) {
  MPI_Barrier(MPI_COMM_WORLD);
  std::map<std::string, std::string> all;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "filler") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    all[fs::relative(e.path(), dir).string()] =
        std::to_string(bytes.size()) + " bytes, hash " +
        std::to_string(std::hash<std::string>()(bytes));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return all;
}

struct Data {
  explicit Data(float seed)
      : grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1}),
        x(grid, HaloLayout(Distribution(Shape{2, 4, 32, 64}, grid.shape()))),
        w(3000) {
    const Shape lower = x.shard().lower;
    x.interior().for_each([&](const Shape& i, float& v) {
      const Shape g = i + lower;
      v = seed + g[1] + 0.5f * g[2] + 0.25f * g[3];
    });
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = seed - 0.125f * i;
  }
  CheckpointState state() {
    CheckpointState s;
    s.describe("full disk test");
    s.add("w", &w);
    s.add("x", &x);
    return s;
  }
  void write_h5(const std::string& path) {
    H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
    f.write("x", x);
    f.write("w", Shape{static_cast<Index>(w.size())}, w.data());
    f.set_attribute("/", "note", std::string(2000, 'n'));
    f.close();
  }
  ProcessGrid grid;
  DistTensor<float> x;
  std::vector<float> w;
};

// The earlier files: out.h5, out.npy, ckpt/step-1 and step-2.
void write_earlier(const std::string& dir) {
  if (world_rank() == 0) {
    fs::remove_all(dir + "/ckpt");
    fs::remove(dir + "/out.h5");
    fs::remove(dir + "/out.npy");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Data old(1.0f);
  old.write_h5(dir + "/out.h5");
  write_npy(dir + "/out.npy", old.x);
  CheckpointDir ckpt(MPI_COMM_WORLD, dir + "/ckpt", CheckpointOptions{2});
  ckpt.save(1, old.state());
  ckpt.save(2, old.state());
}

TEST(FullDisk, EveryWriteFailsTogetherAndLeavesTheEarlierFiles) {
  SmallDisk disk("full_disk", 1 << 20);
  if (!disk.mounted()) GTEST_SKIP() << disk.why_not();
  const std::string dir = disk.dir();
  int failures = 0, successes = 0;
  for (const long long free_kib :
       {0, 4, 12, 24, 40, 56, 72, 88, 104, 120, 136, 160, 200, 260, 400}) {
    SCOPED_TRACE(std::to_string(free_kib) + " KiB free");
    disk.leave_free(1 << 30);  // (removes the filler)
    write_earlier(dir);
    disk.leave_free(free_kib << 10);
    Data fresh(2.0f);
    // HDF5 over an earlier file.
    auto before = contents(dir);
    std::optional<std::string> error =
        same_outcome_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                                  [&] { fresh.write_h5(dir + "/out.h5"); });
    if (error) {
      ++failures;
      EXPECT_NE(error->find("out.h5"), std::string::npos) << *error;
      EXPECT_EQ(contents(dir), before) << *error;
    } else {
      ++successes;
      H5File f(MPI_COMM_WORLD, dir + "/out.h5", H5Mode::kRead);
      EXPECT_EQ(f.read_array<float>("w"), fresh.w);
      EXPECT_FALSE(fs::exists(dir + "/out.h5.tmp"));
    }
    // .npy over an earlier file.
    before = contents(dir);
    error = same_outcome_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo, [&] {
      write_npy(dir + "/out.npy", fresh.x);
    });
    if (error) {
      ++failures;
      EXPECT_NE(error->find("out.npy"), std::string::npos) << *error;
      EXPECT_EQ(contents(dir), before) << *error;
    } else {
      ++successes;
      DistTensor<float> y(fresh.grid, fresh.x.layout());
      read_npy(dir + "/out.npy", y);
      long long wrong = 0;
      y.interior().for_each([&](const Shape& i, const float& v) {
        wrong += v != fresh.x.interior()(i);
      });
      EXPECT_EQ(testing::max_over(MPI_COMM_WORLD, wrong), 0);
    }
    // A checkpoint beside two earlier ones.
    before = contents(dir);
    CheckpointDir ckpt(MPI_COMM_WORLD, dir + "/ckpt", CheckpointOptions{2});
    error = same_outcome_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                                      [&] { ckpt.save(3, fresh.state()); });
    if (error) {
      ++failures;
      EXPECT_EQ(contents(dir), before) << *error;
    } else {
      ++successes;
      EXPECT_EQ(ckpt.steps(), (std::vector<std::int64_t>{2, 3}));
    }
    Data loaded(0.0f), old(1.0f);
    CheckpointState s = loaded.state();
    const std::optional<std::int64_t> step = ckpt.load_latest(s);
    ASSERT_TRUE(step.has_value());
    EXPECT_EQ(loaded.w, *step == 3 ? fresh.w : old.w);
    if (world_rank() == 0 && error)
      std::printf("  error: %s\n", error->c_str());
  }
  // The levels span both outcomes.
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0);
}

}  // namespace
}  // namespace distconv::io
