// GPU halo pack kernels (halo/cuda/box_pack.h) against a device-to-device
// cudaMemcpyAsync of the same number of bytes, timed side by side in one
// run with CUDA events. The boxes are a real halo plan's: part 0 of a
// periodic layout, so it has every neighbour.
//
//   gpu_pack_bench                                  # the default problems
//   gpu_pack_bench --shape=1x16x2048x2048 --grid=1x1x2x2 --width=1
//                  --order=nhwc --type=bf16 --reps=50    (one line)
//
// Prints per problem the bytes packed, the memcpy's bandwidth and, for pack,
// unpack and unpack-with-sum, the bandwidth and the ratio memcpy time /
// kernel time (1.0: as fast as the memcpy). Bandwidth counts the
// packed bytes once, for the memcpy as for the kernels. On a machine with
// no GPU it says so and exits 0.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/internal/cuda_check.h"
#include "halo/halo_plan.h"
#include "halo/cuda/box_pack.h"
#include "perf/cli_args.h"
#include "perf/cuda_timing.h"

namespace distconv {
namespace {

using internal::check_cuda;

struct Problem {
  Shape shape;  // global, logical (N, C, spatial...)
  Shape grid;
  Index width = 1;
  StorageOrder order = StorageOrder::kChannelsFirst;
  std::string type = "f32";
};

struct Options {
  std::vector<Problem> problems;
  int reps = 30;
};

std::vector<Problem> default_problems() {
  std::vector<Problem> out;
  const Problem shapes[] = {
      {Shape{1, 16, 2048, 2048}, Shape{1, 1, 2, 2}},
      {Shape{8, 64, 256, 256}, Shape{1, 1, 2, 2}},
      {Shape{1, 4, 128, 128, 128}, Shape{1, 1, 2, 2, 2}},
      {Shape{1, 16, 128, 128, 128}, Shape{1, 1, 2, 2, 2}},
  };
  for (const Problem& p : shapes) {
    for (StorageOrder order :
         {StorageOrder::kChannelsFirst, StorageOrder::kChannelsLast}) {
      for (const char* type : {"f32", "bf16"}) {
        Problem q = p;
        q.order = order;
        q.type = type;
        out.push_back(q);
      }
    }
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  Problem p{Shape{1, 16, 2048, 2048}, Shape{1, 1, 2, 2}};
  bool any = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* v = option_value(a, "--shape=")) {
      p.shape = parse_dims(v);
      any = true;
    } else if (const char* v = option_value(a, "--grid=")) {
      p.grid = parse_dims(v);
    } else if (const char* v = option_value(a, "--width=")) {
      p.width = std::stoll(v);
    } else if (const char* v = option_value(a, "--order=")) {
      require(std::string(v) == "nchw" || std::string(v) == "nhwc",
              ErrorKind::kInvalidArgument, "--order is nchw or nhwc");
      p.order = std::string(v) == "nhwc" ? StorageOrder::kChannelsLast
                                         : StorageOrder::kChannelsFirst;
    } else if (const char* v = option_value(a, "--type=")) {
      p.type = v;
      require(p.type == "f32" || p.type == "f64" || p.type == "f16" ||
                  p.type == "bf16",
              ErrorKind::kInvalidArgument,
              "--type is f32, f64, f16 or bf16, not ", p.type);
    } else if (const char* v = option_value(a, "--reps=")) {
      o.reps = std::stoi(v);
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a);
    }
  }
  o.problems = any ? std::vector<Problem>{p} : default_problems();
  return o;
}

template <typename T>
void run(const Problem& p, int reps) {
  // Periodic in space only (samples and channels have no neighbours).
  std::vector<Boundary> periodic(p.shape.ndims(), Boundary::kOpen);
  for (int d = 2; d < p.shape.ndims(); ++d) periodic[d] = Boundary::kPeriodic;
  Shape widths = Shape::filled(p.shape.ndims(), 0);
  for (int d = 2; d < p.shape.ndims(); ++d) widths[d] = p.width;
  const HaloLayout layout =
      HaloLayout(Distribution(p.shape, p.grid), HaloWidths::symmetric(widths),
                 periodic)
          .with_storage(p.order);
  const HaloPlan plan = make_halo_plan(layout, 0);
  const Shape storage = layout.storage_shape(0);
  const DeviceBoxCopy<T> send_boxes(storage, storage_boxes(layout, plan.sends));
  const DeviceBoxCopy<T> recv_boxes(storage, storage_boxes(layout, plan.recvs));
  const std::size_t bytes = sizeof(T) * send_boxes.packed_volume();
  T* array = static_cast<T*>(DeviceSpace::allocate(sizeof(T) * storage.volume()));
  T* packed = static_cast<T*>(DeviceSpace::allocate(bytes));
  T* copy = static_cast<T*>(DeviceSpace::allocate(bytes));
  const double t_copy = time_of([&] {
    check_cuda(cudaMemcpyAsync(copy, packed, bytes, cudaMemcpyDeviceToDevice,
                               nullptr), "cudaMemcpyAsync");
  }, reps);
  const double t_pack =
      time_of([&] { send_boxes.pack(array, packed, nullptr); }, reps);
  const double t_unpack = time_of(
      [&] { recv_boxes.unpack(packed, array, BoxCombine::kCopy, nullptr); },
      reps);
  const double t_sum = time_of(
      [&] { send_boxes.unpack(packed, array, BoxCombine::kSum, nullptr); },
      reps);
  DeviceSpace::deallocate(array);
  DeviceSpace::deallocate(packed);
  DeviceSpace::deallocate(copy);
  const double gb = bytes * 1e-9;
  std::printf(
      "%-20s grid %-10s %s %-4s %9.2f MB  memcpy %7.1f GB/s | pack %7.1f GB/s "
      "%.2f | unpack %7.1f GB/s %.2f | unpack-sum %7.1f GB/s %.2f | "
      "units of %d\n",
      p.shape.to_string().c_str(), p.grid.to_string().c_str(),
      p.order == StorageOrder::kChannelsLast ? "nhwc" : "nchw",
      p.type.c_str(), bytes * 1e-6, gb / t_copy, gb / t_pack, t_copy / t_pack,
      gb / t_unpack, t_copy / t_unpack, gb / t_sum, t_copy / t_sum,
      send_boxes.width());
}

int main_(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (DeviceSpace::device_count() == 0) {
    std::printf("gpu_pack_bench: no CUDA device on this machine: "
                "benchmark not run\n");
    return 0;
  }
  for (const Problem& p : o.problems) {
    if (p.type == "f32") {
      run<float>(p, o.reps);
    } else if (p.type == "f64") {
      run<double>(p, o.reps);
    } else if (p.type == "f16") {
      run<__half>(p, o.reps);
    } else {
      run<__nv_bfloat16>(p, o.reps);
    }
  }
  return 0;
}

}  // namespace
}  // namespace distconv

int main(int argc, char** argv) {
  try {
    return distconv::main_(argc, argv);
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
