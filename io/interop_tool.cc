// Writes and reads the files of io/interop_test.sh, which checks them
// against h5py and NumPy on one process:
//   interop_tool write DIR   x.npy, x.h5 (float32 2x3x5x4, dataset "x"),
//                            v.npy, v.h5 (float64 2x2x3x4x5, dataset "v"),
//                            b.h5 (bfloat16 2x3x5x4, dataset "b")
//   interop_tool read DIR    py.npy and py.h5 (dataset "y", float32
//                            3x2x7x6, written by NumPy and h5py), pyb.h5
//                            (dataset "y" in bfloat16, by h5py), checked
// every array holding 1, 2, 3, ... in C order, split over all ranks along
// H (samples for v). Exits 1 on a wrong value.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "distconv/dist_tensor.h"
#include "io/h5_file.h"
#include "io/npy_file.h"

namespace distconv::io {
namespace {

template <typename T>
void fill(DistTensor<T>& t) {
  const Shape lower = t.shard().lower;
  t.interior().for_each([&](const Shape& i, T& v) {
    v = static_cast<T>(1 + linear_index(i + lower, t.global_shape()));
  });
}

template <typename T>
long long wrong(const DistTensor<T>& t) {
  const Shape lower = t.shard().lower;
  long long bad = 0;
  t.interior().for_each([&](const Shape& i, const T& v) {
    if (v != static_cast<T>(1 + linear_index(i + lower, t.global_shape())))
      ++bad;
  });
  long long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, t.grid().comm());
  return all;
}

int run(const std::string& mode, const std::string& dir) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ProcessGrid g4(MPI_COMM_WORLD, Shape{1, 1, size, 1});
  ProcessGrid g5(MPI_COMM_WORLD, Shape{size, 1, 1, 1, 1});
  if (mode == "write") {
    DistTensor<float> x(g4,
                        HaloLayout(Distribution(Shape{2, 3, 5, 4}, g4.shape()))
                            .with_storage(StorageOrder::kChannelsLast));
    DistTensor<double> v(
        g5, HaloLayout(Distribution(Shape{2, 2, 3, 4, 5}, g5.shape())));
    fill(x);
    fill(v);
    write_npy(dir + "/x.npy", x);
    write_npy(dir + "/v.npy", v);
    H5File fx(MPI_COMM_WORLD, dir + "/x.h5", H5Mode::kCreate);
    fx.write("x", x);
    fx.close();
    H5File fv(MPI_COMM_WORLD, dir + "/v.h5", H5Mode::kCreate);
    fv.write("v", v, H5DatasetOptions{Shape{1, 2, 3, 4, 5}});
    fv.close();
    DistTensor<bf16> b(g4,
                       HaloLayout(Distribution(Shape{2, 3, 5, 4}, g4.shape())));
    fill(b);  // 1 to 120: exact in bfloat16
    H5File fb(MPI_COMM_WORLD, dir + "/b.h5", H5Mode::kCreate);
    fb.write("b", b);
    fb.close();
    return 0;
  }
  DistTensor<float> y(g4,
                      HaloLayout(Distribution(Shape{3, 2, 7, 6}, g4.shape())));
  read_npy(dir + "/py.npy", y);
  const long long from_npy = wrong(y);
  H5File f(MPI_COMM_WORLD, dir + "/py.h5", H5Mode::kRead);
  f.read("y", y);
  const long long from_h5 = wrong(y);
  DistTensor<bf16> yb(g4,
                      HaloLayout(Distribution(Shape{3, 2, 7, 6}, g4.shape())));
  H5File fb(MPI_COMM_WORLD, dir + "/pyb.h5", H5Mode::kRead);
  fb.read("y", yb);  // 1 to 252: exact in bfloat16
  const long long from_bf16 = wrong(yb);
  if (g4.rank() == 0) {
    std::printf(
        "interop_tool: %lld wrong values from py.npy, %lld from py.h5, "
        "%lld from pyb.h5\n",
        from_npy, from_h5, from_bf16);
  }
  return from_npy == 0 && from_h5 == 0 && from_bf16 == 0 ? 0 : 1;
}

}  // namespace
}  // namespace distconv::io

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string args[2];
  int n = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--timeout_s=", 12) == 0) continue;
    if (n < 2) args[n++] = argv[i];
  }
  int status = 2;
  try {
    if (n == 2 && (args[0] == "write" || args[0] == "read")) {
      status = distconv::io::run(args[0], args[1]);
    } else {
      std::fprintf(stderr, "usage: interop_tool write|read DIR\n");
    }
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
