// Bad files give the same Error(kIo) on every rank, naming the file, and
// leave the job able to go on: missing file or dataset, wrong shape or
// element type, truncated files, files of another format, no permission,
// and a full disk (a small tmpfs, mounted when the test may).
#include <fcntl.h>
#include <mpi.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "distconv/dist_tensor.h"
#include "gtest/gtest.h"
#include "io/h5_file.h"
#include "io/npy_file.h"
#include "tests/mpi_testing.h"

namespace distconv::io {
namespace {

using testing::temp_path;
using testing::world_rank;
using testing::world_size;

// The same Error(kIo) on every rank, containing `contains`; rank 0 prints
// it (the log shows what users see).
void expect_error_on_all_ranks(MPI_Comm comm, ErrorKind kind,
                               const std::string& contains,
                               const std::function<void()>& fn) {
  const std::string message =
      testing::expect_error_on_all_ranks(comm, kind, contains, fn);
  if (world_rank() == 0) std::printf("  error: %s\n", message.c_str());
}

// Runs `fn` on rank 0, then all ranks meet.
template <typename Fn>
void on_root(Fn fn) {
  if (world_rank() == 0) fn();
  MPI_Barrier(MPI_COMM_WORLD);
}

class BadFiles : public ::testing::Test {
 protected:
  BadFiles()
      : grid_(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1}),
        x_(grid_, HaloLayout(Distribution(Shape{2, 3, 8, 5}, grid_.shape()))),
        wide_(grid_,
              HaloLayout(Distribution(Shape{2, 3, 9, 5}, grid_.shape()))),
        f64_(grid_,
             HaloLayout(Distribution(Shape{2, 3, 8, 5}, grid_.shape()))) {
    const Index h0 = x_.shard().lower[2];
    x_.interior().for_each(
        [&](const Shape& i, float& v) { v = i[2] + h0 + 0.5f; });
    write_npy(npy_, x_);
    H5File f(MPI_COMM_WORLD, h5_, H5Mode::kCreate);
    f.write("x", x_);
    f.close();
  }

  ProcessGrid grid_;
  DistTensor<float> x_, wide_;
  DistTensor<double> f64_;
  const std::string npy_ = temp_path("good.npy");
  const std::string h5_ = temp_path("good.h5");
};

TEST_F(BadFiles, MissingFileOrDataset) {
  const std::string npy = temp_path("missing.npy"),
                    h5 = temp_path("missing.h5");
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "cannot open " + npy + " for reading",
                            [&] { read_npy(npy, x_); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "cannot open " + h5,
      [&] { H5File f(MPI_COMM_WORLD, h5, H5Mode::kRead); });
  H5File f(MPI_COMM_WORLD, h5_, H5Mode::kRead);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            h5_ + " has no dataset 'y'",
                            [&] { f.read("y", x_); });
}

TEST_F(BadFiles, WrongShapeOrElementType) {
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "holds an array of shape 2x3x8x5, not 2x3x9x5",
                            [&] { read_npy(npy_, wide_); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "holds float32, not float64",
                            [&] { read_npy(npy_, f64_); });
  H5File f(MPI_COMM_WORLD, h5_, H5Mode::kRead);
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "has shape 2x3x8x5, not 2x3x9x5",
                            [&] { f.read("x", wide_); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "holds float32, not float64",
                            [&] { f.read("x", f64_); });
}

TEST_F(BadFiles, TruncatedFiles) {
  const std::string npy = temp_path("cut.npy"), h5 = temp_path("cut.h5");
  on_root([&] {
    std::ifstream a(npy_, std::ios::binary), b(h5_, std::ios::binary);
    const std::string sa((std::istreambuf_iterator<char>(a)), {});
    const std::string sb((std::istreambuf_iterator<char>(b)), {});
    std::ofstream(npy, std::ios::binary) << sa.substr(0, sa.size() - 100);
    std::ofstream(h5, std::ios::binary) << sb.substr(0, sb.size() / 2);
  });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            npy + " is truncated", [&] { read_npy(npy, x_); });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo, h5, [&] {
    H5File f(MPI_COMM_WORLD, h5, H5Mode::kRead);
    f.read("x", x_);
  });
}

TEST_F(BadFiles, FilesOfAnotherFormat) {
  const std::string text = temp_path("notes.txt");
  on_root([&] { std::ofstream(text) << "step loss\n1 0.25\n2 0.125\n"; });
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            text + " is not a .npy file",
                            [&] { read_npy(text, x_); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "cannot open " + text,
      [&] { H5File f(MPI_COMM_WORLD, text, H5Mode::kRead); });
  // Each format's file handed to the other reader.
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            h5_ + " is not a .npy file",
                            [&] { read_npy(h5_, x_); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "cannot open " + npy_,
      [&] { H5File f(MPI_COMM_WORLD, npy_, H5Mode::kRead); });
}

// A tensor is read only from a dataset of its own shape and storage
// order: a larger dataset (more channels, a larger image) only as the
// window asked for (H5Window), a dataset whose "distconv_order" says it is
// stored otherwise (NHWC) not at all.
TEST_F(BadFiles, DatasetsOfAnotherShapeOrOrder) {
  const std::string path = temp_path("shapes.h5");
  DistTensor<float> big(
      grid_, HaloLayout(Distribution(Shape{4, 5, 10, 7}, grid_.shape())));
  big.interior().for_each([&](const Shape& i, float& v) {
    const Shape g = i + big.shard().lower;
    v = g[0] * 1000 + g[1] * 100 + g[2] * 10 + g[3];
  });
  {
    H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
    f.write("big", big);
    f.write("x", x_);
    f.write("nhwc", x_);
    f.set_attribute("nhwc", "distconv_order", std::string("NHWC"));
    f.close();
  }
  H5File f(MPI_COMM_WORLD, path, H5Mode::kRead);
  DistTensor<float> y(grid_, x_.layout());  // 2x3x8x5
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "is stored NHWC (its distconv_order), not NCHW",
                            [&] { f.read("nhwc", y); });
  // More samples, channels, rows and columns than the tensor: refused
  // unless asked for, whatever the offset.
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "has shape 4x5x10x7, not 2x3x8x5",
                            [&] { f.read("big", y); });
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "has shape 4x5x10x7, not 2x3x8x5",
      [&] { f.read("big", y, H5ReadOptions{Shape{2, 0, 0, 0}}); });
  // A batch of samples: the other extents must be the tensor's.
  expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo,
      "has shape 4x5x10x7: a batch of 2x3x8x5 needs every extent but the "
      "samples' to be the tensor's",
      [&] {
        f.read("big", y,
               H5ReadOptions{Shape{2, 0, 0, 0}, PageCache::kStream,
                             H5Window::kSamples});
      });
  // A window asked for: read from where it says.
  f.read("big", y,
         H5ReadOptions{Shape{1, 2, 1, 2}, PageCache::kStream, H5Window::kBox});
  long long wrong = 0;
  y.interior().for_each([&](const Shape& i, const float& v) {
    const Shape g = i + y.shard().lower + Shape{1, 2, 1, 2};
    wrong += v != g[0] * 1000 + g[1] * 100 + g[2] * 10 + g[3];
  });
  EXPECT_EQ(wrong, 0);
  DistTensor<float> batch(
      grid_, HaloLayout(Distribution(Shape{2, 3, 8, 5}, grid_.shape())));
  f.read("x", batch,
         H5ReadOptions{Shape{0, 0, 0, 0}, PageCache::kStream,
                       H5Window::kSamples});
}

// Root bypasses permission checks: as root, the checks run with the
// effective user set to nobody (the real user stays root, to come back).
class AsUnprivileged {
 public:
  AsUnprivileged() : was_(geteuid()) {
    if (was_ == 0) {
      EXPECT_EQ(seteuid(65534), 0);
    }
  }
  ~AsUnprivileged() {
    if (was_ == 0) {
      EXPECT_EQ(seteuid(0), 0);
    }
  }

 private:
  uid_t was_;
};

TEST_F(BadFiles, NoPermission) {
  const std::string dir = temp_path("locked");
  on_root([&] {
    mkdir(dir.c_str(), 0755);
    chmod(dir.c_str(), 0755);
    std::ofstream(dir + "/x.npy") << "x";
    std::ofstream(dir + "/x.h5") << "x";
    chmod((dir + "/x.npy").c_str(), 0);
    chmod((dir + "/x.h5").c_str(), 0);
    chmod(dir.c_str(), 0555);  // no new files either
  });
  {
    AsUnprivileged nobody;
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                              "cannot open " + dir + "/x.npy for reading",
                              [&] { read_npy(dir + "/x.npy", x_); });
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kIo, "cannot open " + dir + "/x.h5",
        [&] { H5File f(MPI_COMM_WORLD, dir + "/x.h5", H5Mode::kRead); });
    expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                              "cannot open " + dir + "/y.npy for writing",
                              [&] { write_npy(dir + "/y.npy", x_); });
    expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kIo, "cannot create " + dir + "/y.h5",
        [&] { H5File f(MPI_COMM_WORLD, dir + "/y.h5", H5Mode::kCreate); });
  }
  on_root([&] { chmod(dir.c_str(), 0755); });
}

// A 64 KiB tmpfs, mounted by rank 0 where the test may mount (root);
// unmounted on destruction.
class SmallDisk {
 public:
  SmallDisk() : dir_(temp_path("small_disk")) {
    int ok = 0;
    if (world_rank() == 0) {
      mkdir(dir_.c_str(), 0755);
      ok = mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") == 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mounted_ = ok != 0;
  }
  ~SmallDisk() {
    on_root([&] {
      if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    });
  }
  bool mounted() const { return mounted_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST_F(BadFiles, FullDisk) {
  SmallDisk disk;
  if (!disk.mounted()) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): the "
                    "full-disk case did not run";
  }
  // 1 MiB of float32 into 64 KiB.
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, world_size(), 1});
  DistTensor<float> big(
      grid, HaloLayout(Distribution(Shape{1, 4, 256, 256}, grid.shape())));
  const std::string npy = disk.dir() + "/big.npy", h5 = disk.dir() + "/big.h5";
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo,
                            "cannot write " + npy,
                            [&] { write_npy(npy, big); });
  EXPECT_NE(access(npy.c_str(), F_OK), 0) << "a partial file was left";
  expect_error_on_all_ranks(MPI_COMM_WORLD, ErrorKind::kIo, h5, [&] {
    H5File f(MPI_COMM_WORLD, h5, H5Mode::kCreate);
    f.write("x", big);
    f.close();
  });
  // Nothing is broken: the good files still read.
  DistTensor<float> y(grid_, x_.layout());
  read_npy(npy_, y);
  H5File f(MPI_COMM_WORLD, h5_, H5Mode::kRead);
  f.read("x", y);
  long long wrong = 0;
  y.interior().for_each([&](const Shape& i, const float& v) {
    if (v != i[2] + y.shard().lower[2] + 0.5f) ++wrong;
  });
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace distconv::io
