// The pooling layer on one GPU (Pooling<float, DeviceSpace> over a grid of
// one rank) against direct cuDNN pooling on the same problem, timed side
// by side in one run with CUDA events: a training step's two passes,
// forward and backward. Direct cuDNN runs on dense channels-last tensors
// (deterministic max pooling, NaNs propagated); the layer runs its CUDA
// kernels on the same layout.
//
//   gpu_pool_bench                          # the default problems
//   gpu_pool_bench --shape=8x64x256x256 --kind=max --kernel=3 --stride=2
//                  --padding=1 --reps=20    (one line)
//
// Prints per problem the milliseconds of a step for each, the ratio
// direct / layer (1.0: as fast as direct cuDNN; above: faster), each
// pass's milliseconds, and the largest difference between the layer's and
// cuDNN's output and input gradient on the same random input. On a machine
// with no GPU it says so and exits 0.
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "kernels/cudnn/cudnn_descriptors.h"
#include "layers/pooling.h"
#include "perf/cli_args.h"
#include "perf/cuda_timing.h"

namespace distconv {
namespace {

struct Problem {
  Shape shape;  // N, C, spatial...
  PoolKind kind;
  Index kernel, stride, padding;
};

struct Options {
  std::vector<Problem> problems;
  int reps = 20;
};

PoolKind parse_kind(const std::string& k) {
  if (k == "max") return PoolKind::kMax;
  if (k == "avg") return PoolKind::kAverageExcludePadding;
  if (k == "avg-include") return PoolKind::kAverageIncludePadding;
  throw Error(ErrorKind::kInvalidArgument,
              "--kind is max, avg (padding excluded) or avg-include");
}

Options parse(int argc, char** argv) {
  Options o;
  Problem p{Shape{1, 16, 1024, 1024}, PoolKind::kMax, 3, 2, 1};
  bool any = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* v = option_value(a, "--shape=")) {
      p.shape = parse_dims(v);
      any = true;
    } else if (const char* v = option_value(a, "--kind=")) {
      p.kind = parse_kind(v);
    } else if (const char* v = option_value(a, "--kernel=")) {
      p.kernel = std::stoll(v);
    } else if (const char* v = option_value(a, "--stride=")) {
      p.stride = std::stoll(v);
    } else if (const char* v = option_value(a, "--padding=")) {
      p.padding = std::stoll(v);
    } else if (const char* v = option_value(a, "--reps=")) {
      o.reps = std::stoi(v);
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a);
    }
  }
  const auto avg = PoolKind::kAverageExcludePadding;
  o.problems = any ? std::vector<Problem>{p}
                   : std::vector<Problem>{
                         {Shape{1, 16, 1024, 1024}, PoolKind::kMax, 3, 2, 1},
                         {Shape{8, 64, 256, 256}, PoolKind::kMax, 3, 2, 1},
                         {Shape{8, 64, 256, 256}, avg, 2, 2, 0},
                         {Shape{8, 64, 256, 256}, avg, 3, 1, 1},
                         {Shape{1, 16, 128, 128, 128}, PoolKind::kMax, 2, 2,
                          0}};
  return o;
}

cudnnPoolingMode_t cudnn_mode(PoolKind k) {
  switch (k) {
    case PoolKind::kMax:
      return CUDNN_POOLING_MAX_DETERMINISTIC;
    case PoolKind::kAverageIncludePadding:
      return CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    case PoolKind::kAverageExcludePadding:
      return CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  }
  return CUDNN_POOLING_MAX;
}

struct DeviceFloats {
  explicit DeviceFloats(Index n)
      : p(static_cast<float*>(DeviceSpace::allocate(sizeof(float) * n))),
        n(n) {}
  ~DeviceFloats() { DeviceSpace::deallocate(p); }
  std::vector<float> read() const {
    std::vector<float> out(n);
    DeviceSpace::copy_to_host(out.data(), p, sizeof(float) * n);
    return out;
  }
  float* p;
  Index n;
};

float max_difference(const std::vector<float>& a,
                     const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

void run(const Problem& p, int reps) {
  const int nsp = p.shape.ndims() - 2;
  PoolDesc d = PoolDesc::make(p.kind, Shape::filled(nsp, p.kernel));
  d.stride = Shape::filled(nsp, p.stride);
  d.padding_lower = d.padding_upper = Shape::filled(nsp, p.padding);
  const Shape dst = d.dst_shape(p.shape);
  ProcessGrid grid(MPI_COMM_SELF, Shape::filled(p.shape.ndims(), 1));
  Pooling<float, DeviceSpace> layer(grid, d,
                                    Distribution(p.shape, grid.shape()));
  DistTensor<float, DeviceSpace> x(grid, layer.src_layout()),
      y(grid, layer.dst_layout()), dy(grid, layer.diff_dst_layout()),
      dx(grid, layer.diff_src_layout());
  require(x.size() == p.shape.volume() && y.size() == dst.volume(),
          ErrorKind::kShapeMismatch, "one rank's tensors should have no halos");
  // The same random input and output gradient for both.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> hx(p.shape.volume()), hdy(dst.volume());
  for (float& v : hx) v = u(rng);
  for (float& v : hdy) v = u(rng);
  DeviceSpace::copy_to_device(x.data(), hx.data(), sizeof(float) * hx.size());
  DeviceSpace::copy_to_device(dy.data(), hdy.data(),
                              sizeof(float) * hdy.size());
  DeviceFloats by(dst.volume()), bdx(p.shape.volume());

  cudnnHandle_t h;
  check_cudnn(cudnnCreate(&h), "cudnnCreate");
  cudnn::TensorDesc xd, yd;
  xd.set(CUDNN_DATA_FLOAT, p.shape,
         dense_strides(p.shape, StorageOrder::kChannelsLast));
  yd.set(CUDNN_DATA_FLOAT, dst,
         dense_strides(dst, StorageOrder::kChannelsLast));
  cudnnPoolingDescriptor_t pd;
  check_cudnn(cudnnCreatePoolingDescriptor(&pd),
              "cudnnCreatePoolingDescriptor");
  const std::vector<int> window = cudnn::ints(d.kernel),
                         padding = cudnn::ints(d.padding_lower),
                         stride = cudnn::ints(d.stride);
  check_cudnn(cudnnSetPoolingNdDescriptor(pd, cudnn_mode(p.kind),
                                          CUDNN_PROPAGATE_NAN, nsp,
                                          window.data(), padding.data(),
                                          stride.data()),
              "cudnnSetPoolingNdDescriptor");
  const float one = 1, zero = 0;
  auto direct_fwd = [&] {
    check_cudnn(cudnnPoolingForward(h, pd, &one, xd.get(), x.data(), &zero,
                                    yd.get(), by.p),
                "cudnnPoolingForward");
  };
  auto direct_bwd = [&] {
    check_cudnn(cudnnPoolingBackward(h, pd, &one, yd.get(), by.p, yd.get(),
                                     dy.data(), xd.get(), x.data(), &zero,
                                     xd.get(), bdx.p),
                "cudnnPoolingBackward");
  };
  auto layer_fwd = [&] { layer.forward(x, y); };
  auto layer_bwd = [&] { layer.backward(x, dy, dx); };
  const double t_direct = time_of([&] { direct_fwd(), direct_bwd(); }, reps);
  const double t_layer = time_of([&] { layer_fwd(), layer_bwd(); }, reps);
  const double direct_f = time_of(direct_fwd, reps);
  const double direct_b = time_of(direct_bwd, reps);
  const double layer_f = time_of(layer_fwd, reps);
  const double layer_b = time_of(layer_bwd, reps);
  internal::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<float> ly(dst.volume()), ldx(p.shape.volume());
  DeviceSpace::copy_to_host(ly.data(), y.data(), sizeof(float) * ly.size());
  DeviceSpace::copy_to_host(ldx.data(), dx.data(), sizeof(float) * ldx.size());
  cudnnDestroyPoolingDescriptor(pd);
  cudnnDestroy(h);
  std::printf(
      "%-20s %-24s k=%lld s=%lld p=%lld direct cudnn %8.3f ms | layer %8.3f "
      "ms | direct/layer %.3f\n",
      p.shape.to_string().c_str(), to_string(p.kind),
      static_cast<long long>(p.kernel), static_cast<long long>(p.stride),
      static_cast<long long>(p.padding), t_direct * 1e3, t_layer * 1e3,
      t_direct / t_layer);
  std::printf(
      "  ms: direct fwd %.3f bwd %.3f | layer fwd %.3f bwd %.3f | max "
      "|layer - cudnn|: y %.3g dx %.3g\n  layer kernels: %s",
      direct_f * 1e3, direct_b * 1e3, layer_f * 1e3, layer_b * 1e3,
      max_difference(ly, by.read()), max_difference(ldx, bdx.read()),
      layer.describe().c_str());
}

int main_(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (DeviceSpace::device_count() == 0) {
    std::printf(
        "gpu_pool_bench: no CUDA device on this machine: benchmark not run\n");
    return 0;
  }
  for (const Problem& p : o.problems) run(p, o.reps);
  return 0;
}

}  // namespace
}  // namespace distconv

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 1;
  try {
    rc = distconv::main_(argc, argv);
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  MPI_Finalize();
  return rc;
}
