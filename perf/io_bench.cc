// Times one collective write or read of a distributed tensor through
// io/ (.npy over MPI-IO or parallel HDF5), all ranks splitting D (or H):
//
//   mpirun -np 4 io_bench --format=npy --mode=write --path=/data/t.npy
//       [--shape=1x4x512x512x512] [--page-cache=stream|keep]
//
// --page-cache: what the transfer leaves in the page cache
// (io/page_cache.h; default stream).
// A write is timed until the file is on disk (rank 0 fsyncs it, as
// `dd conv=fdatasync` does); a read from wherever the file is (drop the
// page cache before it to read from disk: perf/io_bench.sh does).
// Rank 0 prints one line:
//   io {"format": "npy", "mode": "write", "ranks": 4, "bytes": ..., "seconds":
//   ..., "gib_per_s": ...}
// A read checks every value it read (not timed) and fails on a wrong one.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "io/h5_file.h"
#include "io/npy_file.h"
#include "perf/cli_args.h"

namespace distconv {
namespace {

struct Options {
  std::string format = "npy", mode = "write", path;
  io::PageCache page_cache = io::PageCache::kStream;
  Shape shape{1, 4, 512, 512, 512};
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (const char* v = option_value(arg, "--format=")) {
      o.format = v;
    } else if (const char* v = option_value(arg, "--mode=")) {
      o.mode = v;
    } else if (const char* v = option_value(arg, "--path=")) {
      o.path = v;
    } else if (const char* v = option_value(arg, "--shape=")) {
      o.shape = parse_dims(v);
    } else if (const char* v = option_value(arg, "--page-cache=")) {
      const std::string cache = v;
      require(cache == "stream" || cache == "keep", ErrorKind::kInvalidArgument,
              "--page-cache=", cache, " is not stream or keep");
      o.page_cache = cache == "stream" ? io::PageCache::kStream
                                       : io::PageCache::kKeep;
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + arg);
    }
  }
  require(o.format == "npy" || o.format == "h5", ErrorKind::kInvalidArgument,
          "--format=", o.format, " is not npy or h5");
  require(o.mode == "write" || o.mode == "read", ErrorKind::kInvalidArgument,
          "--mode=", o.mode, " is not write or read");
  require(!o.path.empty(), ErrorKind::kInvalidArgument, "--path is missing");
  require(o.shape.ndims() >= 3, ErrorKind::kInvalidArgument,
          "--shape=", o.shape, " needs 3 or more dimensions");
  return o;
}

// A value per global index, exact in float for the first 2^24 of them and
// the same on every grid.
float value_at(const Shape& i) {
  Index h = 0;
  for (int d = 0; d < i.ndims(); ++d) h = h * 131 + i[d];
  return static_cast<float>(h % 65521);
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Shape grid_shape = Shape::filled(o.shape.ndims(), 1);
  grid_shape[2] = ranks;
  ProcessGrid grid(MPI_COMM_WORLD, grid_shape);
  DistTensor<float> t(grid, HaloLayout(Distribution(o.shape, grid_shape)));
  const Shape lower = t.shard().lower;
  if (o.mode == "write") {
    t.interior().for_each(
        [&](const Shape& i, float& v) { v = value_at(i + lower); });
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (o.format == "npy") {
    o.mode == "write" ? io::write_npy(o.path, t, o.page_cache)
                      : io::read_npy(o.path, t, o.page_cache);
  } else if (o.mode == "write") {
    io::H5File f(MPI_COMM_WORLD, o.path, io::H5Mode::kCreate);
    io::H5DatasetOptions options;
    options.page_cache = o.page_cache;
    f.write("x", t, options);
    f.close();
  } else {
    io::H5File f(MPI_COMM_WORLD, o.path, io::H5Mode::kRead);
    io::H5ReadOptions options;
    options.page_cache = o.page_cache;
    f.read("x", t, options);
  }
  if (o.mode == "write" && grid.rank() == 0) {
    const int fd = open(o.path.c_str(), O_RDONLY);
    require(fd >= 0 && fsync(fd) == 0, ErrorKind::kIo, "cannot sync ", o.path);
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - start;
  long long wrong = 0;
  if (o.mode == "read") {
    t.interior().for_each([&](const Shape& i, const float& v) {
      if (v != value_at(i + lower)) ++wrong;
    });
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
  }
  const double bytes = 4.0 * static_cast<double>(o.shape.volume());
  if (grid.rank() == 0) {
    std::printf(
        "io {\"format\": \"%s\", \"mode\": \"%s\", \"ranks\": %d, \"bytes\": "
        "%.0f, \"seconds\": %.3f, \"gib_per_s\": %.3f, \"wrong\": %lld}\n",
        o.format.c_str(), o.mode.c_str(), ranks, bytes, seconds,
        bytes / seconds / (1 << 30), wrong);
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace
}  // namespace distconv

// --help's text.
constexpr const char* kUsage =
    "usage: mpirun -np P io_bench --path=FILE [options]\n"
    "One collective write or read of a distributed tensor.\n"
    "  --path=FILE                the file (required)\n"
    "  --format=npy|h5            .npy over MPI-IO or parallel HDF5 (default npy)\n"
    "  --mode=write|read          (default write)\n"
    "  --shape=NxCxDxHxW          the tensor (default 1x4x512x512x512)\n"
    "  --page-cache=stream|keep   what the transfer leaves in the page cache\n"
    "                             (default stream)\n"
    "  --help                     this text\n";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (distconv::help_printed(argc, argv, kUsage)) {
    MPI_Finalize();
    return 0;
  }
  int status = 0;
  try {
    status = distconv::run(argc, argv);
  } catch (const distconv::Error& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "io_bench: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
