// Round trips of distributed tensors through .npy (MPI-IO) and HDF5 files:
// written on one grid and read on another, bitwise, with halos untouched;
// uneven and empty shards, 2D and 3D, channel splits, either storage order.
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "gtest/gtest.h"
#include "io/h5_file.h"
#include "io/npy_file.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv::io {
namespace {

using testing::factorizations;
using testing::global_value;
using testing::temp_path;
using testing::world_rank;
using testing::world_size;

enum class Format { kNpy, kHdf5 };

template <typename T>
void write_tensor(Format f, const std::string& path, const DistTensor<T>& t,
                  PageCache cache = PageCache::kStream) {
  if (f == Format::kNpy) {
    write_npy(path, t, cache);
    return;
  }
  H5File file(t.grid().comm(), path, H5Mode::kCreate);
  H5DatasetOptions options;
  options.page_cache = cache;
  file.write("x", t, options);
  file.close();
}

template <typename T>
void read_tensor(Format f, const std::string& path, DistTensor<T>& t,
                 PageCache cache = PageCache::kStream) {
  if (f == Format::kNpy) {
    read_npy(path, t, cache);
    return;
  }
  H5File file(t.grid().comm(), path, H5Mode::kRead);
  H5ReadOptions options;
  options.page_cache = cache;
  file.read("x", t, options);
}

// The fraction of the pages of the file's first `part` (0 to 1) that are
// in the page cache (mincore), or -1 where the file system keeps every
// page in memory (tmpfs).
double resident_fraction(const std::string& path, double part = 1) {
  struct statfs fs;
  constexpr long kTmpfsMagic = 0x01021994;
  if (statfs(path.c_str(), &fs) != 0 || fs.f_type == kTmpfsMagic) return -1;
  const int fd = open(path.c_str(), O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return -1;
  const std::size_t bytes =
      std::max<std::size_t>(1, static_cast<std::size_t>(part * st.st_size));
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return -1;
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> in((bytes + page - 1) / page);
  const bool ok = mincore(map, bytes, in.data()) == 0;
  munmap(map, bytes);
  if (!ok) return -1;
  long long resident = 0;
  for (unsigned char c : in) resident += c & 1;
  return static_cast<double>(resident) / static_cast<double>(in.size());
}

// Writes `global` on `from` and reads it on `to`; every cell checked.
template <typename T>
void round_trip(Format f, const Distribution& from, const Distribution& to,
                StorageOrder from_order, StorageOrder to_order) {
  const Shape global = from.global_shape();
  const std::string path = temp_path(f == Format::kNpy ? "t.npy" : "t.h5");
  ProcessGrid g1(MPI_COMM_WORLD, from.grid_shape());
  DistTensor<T> a(g1, testing::with_halos(from, 1, from_order));
  testing::fill_buffer(a, T(-7));
  const Shape lower = a.shard().lower;
  a.interior().for_each([&](const Shape& i, T& v) {
    v = static_cast<T>(global_value(i + lower, global));
  });
  write_tensor(f, path, a);
  ProcessGrid g2(MPI_COMM_WORLD, to.grid_shape());
  DistTensor<T> b(g2, testing::with_halos(to, 2, to_order));
  testing::fill_buffer(b, T(-3));
  read_tensor(f, path, b);
  const Shape lower_b = b.shard().lower;
  long long wrong = 0;
  b.interior().for_each([&](const Shape& i, const T& v) {
    if (v != static_cast<T>(global_value(i + lower_b, global))) ++wrong;
  });
  EXPECT_EQ(wrong, 0) << from.describe() << " -> " << to.describe();
  EXPECT_TRUE(testing::halos_hold(b, T(-3))) << "halos were written";
}

class TensorIo : public ::testing::TestWithParam<Format> {};

TEST_P(TensorIo, RoundTripsAcrossEveryGrid4D) {
  const int n = world_size();
  const std::vector<Shape> grids = factorizations(n, 4);
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const Shape& to = grids[grids.size() - 1 - i];
    round_trip<float>(GetParam(), Distribution(Shape{3, 5, 7, 6}, grids[i]),
                      Distribution(Shape{3, 5, 7, 6}, to),
                      StorageOrder::kChannelsLast,
                      StorageOrder::kChannelsFirst);
  }
}

TEST_P(TensorIo, RoundTripsAcrossGrids3DInDouble) {
  const int n = world_size();
  const std::vector<Shape> grids = factorizations(n, 5);
  for (std::size_t i = 0; i < grids.size(); i += 3) {
    const Shape& to = grids[(i + 1) % grids.size()];
    round_trip<double>(GetParam(), Distribution(Shape{2, 3, 4, 5, 3}, grids[i]),
                       Distribution(Shape{2, 3, 4, 5, 3}, to),
                       StorageOrder::kChannelsFirst,
                       StorageOrder::kChannelsLast);
  }
}

TEST_P(TensorIo, UnevenAndEmptyShards) {
  const int n = world_size();
  // All of H on the last rank, then all of it on the first.
  std::vector<Index> last(n, 0), first(n, 0);
  last[n - 1] = 9;
  first[0] = 4;
  first[n - 1] += 5;
  const auto along_h = [](const std::vector<Index>& sizes) {
    return Distribution(
        {BlockPartition::balanced(2, 1), BlockPartition::balanced(3, 1),
         BlockPartition::from_sizes(sizes), BlockPartition::balanced(4, 1)});
  };
  round_trip<float>(GetParam(), along_h(last), along_h(first),
                    StorageOrder::kChannelsFirst, StorageOrder::kChannelsLast);
  // More ranks than samples and channels: empty shards everywhere.
  round_trip<float>(GetParam(),
                    Distribution(Shape{1, 1, 3, 2}, Shape{1, n, 1, 1}),
                    Distribution(Shape{1, 1, 3, 2}, Shape{n, 1, 1, 1}),
                    StorageOrder::kChannelsLast, StorageOrder::kChannelsFirst);
}

TEST_P(TensorIo, ReplicatedArrays) {
  const std::string path =
      temp_path(GetParam() == Format::kNpy ? "w.npy" : "w.h5");
  std::vector<std::int64_t> w(2 * 3 * 5);
  for (std::size_t i = 0; i < w.size(); ++i) {
    // Only rank 0's copy is written.
    w[i] = world_rank() == 0 ? static_cast<std::int64_t>(i) * 1000003 : -1;
  }
  std::vector<std::int64_t> back;
  if (GetParam() == Format::kNpy) {
    write_npy(MPI_COMM_WORLD, path, Shape{2, 3, 5}, w.data());
    Shape shape;
    back = read_npy<std::int64_t>(MPI_COMM_WORLD, path, &shape);
    EXPECT_EQ(shape, (Shape{2, 3, 5}));
  } else {
    H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
    f.write("w", Shape{2, 3, 5}, w.data());
    f.set_attribute("w", "note", std::string("weights"));
    f.set_attribute("/", "step", std::int64_t{42});
    f.close();
    H5File g(MPI_COMM_WORLD, path, H5Mode::kRead);
    EXPECT_EQ(g.shape("w"), (Shape{2, 3, 5}));
    EXPECT_EQ(g.type("w"), ElementType::kInt64);
    EXPECT_EQ(g.datasets(), std::vector<std::string>{"w"});
    EXPECT_TRUE(g.contains("w"));
    EXPECT_FALSE(g.contains("v"));
    EXPECT_EQ(g.string_attribute("w", "note"), "weights");
    EXPECT_EQ(g.int_attribute("/", "step"), 42);
    back = g.read_array<std::int64_t>("w");
  }
  ASSERT_EQ(back.size(), w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(back[i], static_cast<std::int64_t>(i) * 1000003);
  }
}

// Shards of more than one piece (io/internal/mpi_io.h's kPieceBytes, 16
// MiB) go piece by piece, streamed or kept, written split along D and read
// split along C (each rank's shard long runs of the file). A streamed write
// leaves (almost) none of the file in the page cache; a streamed read none
// of the first half of rank 0's part (the rest may come back with the
// kernel's read-ahead for the rank before it).
TEST_P(TensorIo, LargeShardsGoInPieces) {
  const int n = world_size();
  const Shape global{2, 4, 40, 128, 130};  // 20 MiB of float
  const std::string path =
      temp_path(GetParam() == Format::kNpy ? "large.npy" : "large.h5");
  const Distribution along_d(global, Shape{1, 1, n, 1, 1});
  const Distribution along_c(global, Shape{1, n, 1, 1, 1});
  for (const PageCache cache : {PageCache::kStream, PageCache::kKeep}) {
    ProcessGrid g1(MPI_COMM_WORLD, along_d.grid_shape());
    DistTensor<float> a(g1, HaloLayout(along_d));
    const Shape lower = a.shard().lower;
    a.interior().for_each([&](const Shape& i, float& v) {
      v = static_cast<float>(global_value(i + lower, global));
    });
    write_tensor(GetParam(), path, a, cache);
    const double after_write =
        world_rank() == 0 ? resident_fraction(path) : -1;
    ProcessGrid g2(MPI_COMM_WORLD, along_c.grid_shape());
    DistTensor<float> b(g2, HaloLayout(along_c));
    read_tensor(GetParam(), path, b, cache);
    const double after_read =
        world_rank() == 0 ? resident_fraction(path, 0.5 / n) : -1;
    const Shape lower_b = b.shard().lower;
    long long wrong = 0;
    b.interior().for_each([&](const Shape& i, const float& v) {
      if (v != static_cast<float>(global_value(i + lower_b, global))) ++wrong;
    });
    EXPECT_EQ(wrong, 0);
    if (cache == PageCache::kStream && world_rank() == 0) {
      if (after_write < 0) {
        std::printf("[  NOTE    ] %s keeps every page: residency not checked\n",
                    path.c_str());
      } else {
        EXPECT_LT(after_write, 0.1) << "streamed write left pages cached";
        EXPECT_LT(after_read, 0.1) << "streamed read left pages cached";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, TensorIo,
                         ::testing::Values(Format::kNpy, Format::kHdf5),
                         [](const auto& info) {
                           return info.param == Format::kNpy ? "Npy" : "Hdf5";
                         });

TEST(H5File, ReadsAWindowOfALargerDataset) {
  const int n = world_size();
  const std::string path = temp_path("window.h5");
  const Shape all{6, 2, 4, 3};
  ProcessGrid g(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  DistTensor<float> a(g, HaloLayout(Distribution(all, g.shape())));
  const Shape lower = a.shard().lower;
  a.interior().for_each([&](const Shape& i, float& v) {
    v = static_cast<float>(global_value(i + lower, all));
  });
  {
    H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
    f.write("x", a, H5DatasetOptions{Shape{1, 2, 4, 3}});  // sample chunks
    f.close();
  }
  ProcessGrid gs(MPI_COMM_WORLD, Shape{n, 1, 1, 1});
  DistTensor<float> batch(
      gs, HaloLayout(Distribution(Shape{2, 2, 4, 3}, gs.shape())));
  H5File f(MPI_COMM_WORLD, path, H5Mode::kRead);
  const H5ReadOptions at4{Shape{4, 0, 0, 0}, PageCache::kStream,
                         H5Window::kSamples};
  f.read("x", batch, at4);  // samples 4 and 5
  const Shape offset = batch.shard().lower + Shape{4, 0, 0, 0};
  long long wrong = 0;
  batch.interior().for_each([&](const Shape& i, const float& v) {
    if (v != static_cast<float>(global_value(i + offset, all))) ++wrong;
  });
  EXPECT_EQ(wrong, 0);
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "does not hold a 2x2x4x3 window", [&] {
        f.read("x", batch,
               H5ReadOptions{Shape{5, 0, 0, 0}, PageCache::kStream,
                             H5Window::kSamples});
      });
}

// Each rank reads its own box (some empty, some one wide, one the whole
// dataset); a box outside the dataset on one rank is the same error on
// every rank, with nothing read.
TEST(H5File, ReadsEachRanksOwnBox) {
  const int n = world_size(), r = world_rank();
  const std::string path = temp_path("boxes.h5");
  const Shape all{2, 3, 5, 4};
  ProcessGrid g(MPI_COMM_WORLD, Shape{1, 1, n, 1});
  DistTensor<double> a(g, HaloLayout(Distribution(all, g.shape())));
  const Shape lower = a.shard().lower;
  a.interior().for_each([&](const Shape& i, double& v) {
    v = global_value(i + lower, all);
  });
  H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
  f.write("x", a);
  const Box box = r == 0   ? Box{{0, 0, 0, 0}, all}
                  : r == 1 ? Box{{1, 2, 3, 1}, {0, 1, 1, 2}}  // empty
                           : Box{{r % 2, 1, r % 5, 1}, {1, 2, 1, 3}};
  const std::vector<float> values = f.read_box<float>("x", box);
  ASSERT_EQ(static_cast<Index>(values.size()), box.volume());
  long long wrong = 0;
  for (Index k = 0; k < box.volume(); ++k) {
    const Shape i = unravel(k, box.extent) + box.lower;
    if (values[static_cast<std::size_t>(k)] !=
        static_cast<float>(global_value(i, all))) {
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0);
  const Box outside = r == n - 1 ? Box{{1, 0, 4, 0}, {1, 3, 2, 4}} : box;
  testing::expect_error_on_all_ranks(
      MPI_COMM_WORLD, ErrorKind::kIo, "does not hold the box 1x3x2x4 at",
      [&] { f.read_box<float>("x", outside); });
  f.close();
}

// bfloat16 bits (NaNs with payloads, infinities, subnormals, signed
// zeros among them) by global index.
std::uint16_t bf16_bits(Index i) {
  return static_cast<std::uint16_t>((i * 40503u + 977u) & 0xffffu);
}

// bfloat16 tensors through HDF5 bit for bit, written on one grid and read
// on another (uneven shards, either storage order), the dataset typed as
// bfloat16; not read into tensors of other types.
TEST(H5File, Bf16TensorsRoundTripBitForBit) {
  const int n = world_size();
  const std::string path = temp_path("bf16.h5");
  const Shape all{2, 3, 7, 5};
  const std::vector<Shape> grids = factorizations(n, 4);
  for (std::size_t k = 0; k < grids.size(); ++k) {
    ProcessGrid g1(MPI_COMM_WORLD, grids[k]);
    DistTensor<bf16> a(
        g1, testing::with_halos(Distribution(all, grids[k]), 1,
                                StorageOrder::kChannelsLast));
    const Shape lower = a.shard().lower;
    a.interior().for_each([&](const Shape& i, bf16& v) {
      v = bf16::from_bits(bf16_bits(linear_index(i + lower, all)));
    });
    {
      H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
      f.write("x", a);
      f.close();
    }
    const Shape to = grids[grids.size() - 1 - k];
    ProcessGrid g2(MPI_COMM_WORLD, to);
    DistTensor<bf16> b(g2, testing::with_halos(Distribution(all, to), 2,
                                               StorageOrder::kChannelsFirst));
    testing::fill_buffer(b, bf16(-3.0f));
    H5File f(MPI_COMM_WORLD, path, H5Mode::kRead);
    EXPECT_EQ(f.type("x"), ElementType::kBfloat16);
    f.read("x", b);
    const Shape lower_b = b.shard().lower;
    long long wrong = 0;
    b.interior().for_each([&](const Shape& i, const bf16& v) {
      if (v.bits() != bf16_bits(linear_index(i + lower_b, all))) ++wrong;
    });
    EXPECT_EQ(wrong, 0) << grids[k] << " -> " << to;
    EXPECT_TRUE(testing::halos_hold(b, bf16(-3.0f))) << "halos were written";
    DistTensor<float> wide(g2, HaloLayout(Distribution(all, to)));
    testing::expect_error_on_all_ranks(
        MPI_COMM_WORLD, ErrorKind::kIo, "holds bfloat16, not float32",
        [&] { f.read("x", wide); });
  }
}

// A bfloat16 box read from float32 rounds to nearest, ties to even (as
// bf16's conversion does); a float32 box from bfloat16 is exact.
TEST(H5File, Bf16BoxesRoundToNearestEven) {
  const std::string path = temp_path("bf16_box.h5");
  const std::vector<float> values = {1.0f + 0x1p-8f,  1.0f + 3 * 0x1p-8f,
                                     -1.0f - 0x1p-8f, 1.1f,
                                     3e38f,           -0.0f};
  const Shape shape{static_cast<Index>(values.size())};
  H5File f(MPI_COMM_WORLD, path, H5Mode::kCreate);
  f.write("f", shape, values.data());
  std::vector<bf16> rounded(values.begin(), values.end());
  f.write("b", shape, rounded.data());
  const Box whole{Shape{0}, shape};
  const std::vector<bf16> narrow = f.read_box<bf16>("f", whole);
  const std::vector<float> wide = f.read_box<float>("b", whole);
  ASSERT_EQ(narrow.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(narrow[i].bits(), bf16(values[i]).bits()) << values[i];
    const float exact = rounded[i];
    EXPECT_EQ(std::memcmp(&wide[i], &exact, sizeof exact), 0) << exact;
  }
  EXPECT_EQ(f.read_array<bf16>("b").size(), values.size());
  f.close();
}

}  // namespace
}  // namespace distconv::io
