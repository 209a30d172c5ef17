// The convolution layer on one GPU (Convolution<float, DeviceSpace> over a
// grid of one rank) against direct cuDNN on the same problem, timed side by
// side in one run with CUDA events: a training step's three passes,
// forward (+ bias), backward-weights (+ bias) and backward-data. Direct
// cuDNN runs on dense channels-last tensors and filters with the fastest
// algorithms cuDNN's own timed search finds; the layer runs as configured.
//
//   gpu_conv_bench                          # the default problems
//   gpu_conv_bench --shape=1x16x1024x1024 --filters=16 --kernel=3
//                  --math=tf32 --search=measured --reps=20    (one line)
//
// Prints per problem and setting the milliseconds of a step for each and
// the ratio direct / layer (1.0: as fast as direct cuDNN; above: faster),
// then the milliseconds of each of direct cuDNN's five calls on
// channels-last and on channels-first tensors, and the layer's kernels
// (describe()).
// perf/torch_conv_bench.py times PyTorch on the same problems. On a
// machine with no GPU it says so and exits 0.
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "kernels/cudnn/cudnn_descriptors.h"
#include "layers/convolution.h"
#include "perf/cli_args.h"
#include "perf/cuda_timing.h"

namespace distconv {
namespace {

using internal::str;

struct Problem {
  Shape shape;  // N, C, spatial...
  Index filters;
  Index kernel;
};

struct Options {
  std::vector<Problem> problems;
  std::vector<GpuMath> maths{GpuMath::kStrict, GpuMath::kTf32};
  GpuAlgoSearch search = GpuAlgoSearch::kMeasured;
  int reps = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  Problem p{Shape{1, 16, 1024, 1024}, 16, 3};
  bool any = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* v = option_value(a, "--shape=")) {
      p.shape = parse_dims(v);
      any = true;
    } else if (const char* v = option_value(a, "--filters=")) {
      p.filters = std::stoll(v);
    } else if (const char* v = option_value(a, "--kernel=")) {
      p.kernel = std::stoll(v);
    } else if (const char* v = option_value(a, "--math=")) {
      const std::string m = v;
      require(m == "strict" || m == "tf32", ErrorKind::kInvalidArgument,
              "--math is strict or tf32");
      o.maths = {m == "tf32" ? GpuMath::kTf32 : GpuMath::kStrict};
    } else if (const char* v = option_value(a, "--search=")) {
      const std::string m = v;
      require(m == "heuristic" || m == "measured", ErrorKind::kInvalidArgument,
              "--search is heuristic or measured");
      o.search = m == "measured" ? GpuAlgoSearch::kMeasured
                                 : GpuAlgoSearch::kHeuristic;
    } else if (const char* v = option_value(a, "--reps=")) {
      o.reps = std::stoi(v);
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a);
    }
  }
  if (!p.filters) p.filters = p.shape[1];
  o.problems = any ? std::vector<Problem>{p}
                   : std::vector<Problem>{{Shape{1, 16, 1024, 1024}, 16, 3},
                                          {Shape{8, 64, 256, 256}, 64, 3},
                                          {Shape{1, 32, 512, 512}, 32, 3},
                                          {Shape{1, 16, 128, 128, 128}, 16, 3}};
  return o;
}

void* device_array(std::size_t bytes) { return DeviceSpace::allocate(bytes); }

// Plain cuDNN, one dense channels-last problem: the baseline.
struct Direct {
  cudnnHandle_t h;
  cudnn::TensorDesc x, y, b;
  cudnn::FilterDesc w;
  cudnn::ConvolutionDesc conv;
  cudnnConvolutionFwdAlgo_t fwd;
  cudnnConvolutionBwdDataAlgo_t data;
  cudnnConvolutionBwdFilterAlgo_t filter;
  std::size_t ws_bytes = 0;
  void* ws = nullptr;

  Direct(cudnnHandle_t handle, const ConvDesc& d, const Shape& src,
         const Shape& dst, GpuMath math, StorageOrder order, void* xp, void* wp,
         void* yp)
      : h(handle) {
    x.set(CUDNN_DATA_FLOAT, src, dense_strides(src, order));
    y.set(CUDNN_DATA_FLOAT, dst, dense_strides(dst, order));
    Shape be = Shape::filled(src.ndims(), 1);
    be[1] = dst[1];
    b.set(CUDNN_DATA_FLOAT, be,
          dense_strides(be, StorageOrder::kChannelsFirst));
    w.set(CUDNN_DATA_FLOAT, d.weights_shape(),
          order == StorageOrder::kChannelsLast);
    conv.set(CUDNN_DATA_FLOAT, d.padding_lower, d.stride, d.dilation, d.groups);
    check_cudnn(cudnnSetConvolutionMathType(
                    conv.get(), math == GpuMath::kTf32 ? CUDNN_TENSOR_OP_MATH
                                                       : CUDNN_FMA_MATH),
                "cudnnSetConvolutionMathType");
    const std::size_t limit = std::size_t{1} << 30;
    void* scratch = device_array(limit);
    int n = 0;
    // The fastest result that succeeded, fits the limit and keeps to the
    // math asked for (cuDNN's timed results come fastest first).
    auto pick = [&](const auto* perf, const char* pass) {
      int i = 0;
      while (
          i < n &&
          !(perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit &&
            (math == GpuMath::kTf32 || perf[i].mathType == CUDNN_FMA_MATH))) {
        ++i;
      }
      require(i < n, ErrorKind::kUnsupported, "no ", pass, " algorithm");
      ws_bytes = std::max(ws_bytes, perf[i].memory);
      return perf[i].algo;
    };
    cudnnConvolutionFwdAlgoPerf_t pf[16];
    check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(
                    h, x.get(), xp, w.get(), wp, conv.get(), y.get(), yp, 16,
                    &n, pf, scratch, limit),
                "cudnnFindConvolutionForwardAlgorithmEx");
    fwd = pick(pf, "forward");
    cudnnConvolutionBwdDataAlgoPerf_t pd[16];
    check_cudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(
                    h, w.get(), wp, y.get(), yp, conv.get(), x.get(), xp, 16,
                    &n, pd, scratch, limit),
                "cudnnFindConvolutionBackwardDataAlgorithmEx");
    data = pick(pd, "backward-data");
    cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
    check_cudnn(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                    h, x.get(), xp, y.get(), yp, conv.get(), w.get(), wp, 16,
                    &n, pw, scratch, limit),
                "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    filter = pick(pw, "backward-filter");
    DeviceSpace::deallocate(scratch);
    ws = device_array(std::max<std::size_t>(ws_bytes, 1));
  }
  ~Direct() { DeviceSpace::deallocate(ws); }

  // The calls of a step, or only call `only` (0 to 4) of them.
  void step(const float* xp, const float* wp, const float* bp, float* yp,
            const float* dyp, float* dwp, float* dbp, float* dxp,
            int only = -1) const {
    const float one = 1, zero = 0;
    if (only < 0 || only == 0)
      check_cudnn(
          cudnnConvolutionForward(h, &one, x.get(), xp, w.get(), wp, conv.get(),
                                  fwd, ws, ws_bytes, &zero, y.get(), yp),
          "cudnnConvolutionForward");
    if (only < 0 || only == 1)
      check_cudnn(cudnnAddTensor(h, &one, b.get(), bp, &one, y.get(), yp),
                  "cudnnAddTensor");
    if (only < 0 || only == 2)
      check_cudnn(cudnnConvolutionBackwardFilter(h, &one, x.get(), xp, y.get(),
                                                 dyp, conv.get(), filter, ws,
                                                 ws_bytes, &zero, w.get(), dwp),
                  "cudnnConvolutionBackwardFilter");
    if (only < 0 || only == 3)
      check_cudnn(cudnnConvolutionBackwardBias(h, &one, y.get(), dyp, &zero,
                                               b.get(), dbp),
                  "cudnnConvolutionBackwardBias");
    if (only < 0 || only == 4)
      check_cudnn(cudnnConvolutionBackwardData(h, &one, w.get(), wp, y.get(),
                                               dyp, conv.get(), data, ws,
                                               ws_bytes, &zero, x.get(), dxp),
                  "cudnnConvolutionBackwardData");
  }
};

void run(const Problem& p, GpuMath math, GpuAlgoSearch search, int reps) {
  const int nsp = p.shape.ndims() - 2;
  ConvDesc d =
      ConvDesc::make(p.shape[1], p.filters, Shape::filled(nsp, p.kernel));
  d.padding_lower = d.padding_upper = Shape::filled(nsp, p.kernel / 2);
  d.bias = ConvBias::kAdd;
  const Shape dst = d.dst_shape(p.shape);
  ProcessGrid grid(MPI_COMM_SELF, Shape::filled(p.shape.ndims(), 1));
  ConvolutionOptions options;
  options.gpu.math = math;
  options.gpu.search = search;
  Convolution<float, DeviceSpace> layer(
      grid, d, Distribution(p.shape, grid.shape()), options);
  DistTensor<float, DeviceSpace> x(grid, layer.src_layout()),
      y(grid, layer.dst_layout()), dy(grid, layer.diff_dst_layout()),
      dx(grid, layer.diff_src_layout());
  const Index nw = d.weights_shape().volume();
  auto* w = static_cast<float*>(device_array(sizeof(float) * nw));
  auto* dw = static_cast<float*>(device_array(sizeof(float) * nw));
  auto* b = static_cast<float*>(device_array(sizeof(float) * p.filters));
  auto* db = static_cast<float*>(device_array(sizeof(float) * p.filters));
  // The baseline's own dense tensors.
  const std::size_t xs = sizeof(float) * p.shape.volume();
  const std::size_t ys = sizeof(float) * dst.volume();
  void* bx = device_array(xs);
  void* by = device_array(ys);
  void* bdy = device_array(ys);
  void* bdx = device_array(xs);
  cudnnHandle_t h;
  check_cudnn(cudnnCreate(&h), "cudnnCreate");
  double t_direct = 0, t_layer = 0;
  std::string calls;
  {
    Direct direct(h, d, p.shape, dst, math, StorageOrder::kChannelsLast, bx, w,
                  by);
    auto step = [&](const Direct& dc, int only) {
      dc.step(static_cast<float*>(bx), w, b, static_cast<float*>(by),
              static_cast<float*>(bdy), dw, db, static_cast<float*>(bdx), only);
    };
    t_direct = time_of([&] { step(direct, -1); }, reps);
    // Where the time goes, in either storage order.
    Direct first(h, d, p.shape, dst, math, StorageOrder::kChannelsFirst, bx, w,
                 by);
    for (const Direct* dc : {&direct, &first}) {
      calls += dc == &direct ? "  direct channels-last  ms:"
                             : "  direct channels-first ms:";
      const char* names[] = {"fwd", "bias", "bwd-w", "bwd-bias", "bwd-data"};
      for (int c = 0; c < 5; ++c) {
        calls +=
            str(" ", names[c], " ", time_of([&] { step(*dc, c); }, reps) * 1e3);
      }
      calls += "\n";
    }
    t_layer = time_of(
        [&] {
          layer.forward(x, w, b, y);
          layer.backward_weights(x, dy, dw, db);
          layer.backward_data(dy, w, dx);
          layer.wait_gradients();
        },
        reps);
  }
  cudnnDestroy(h);
  for (void* q :
       {bx, by, bdy, bdx, static_cast<void*>(w), static_cast<void*>(dw),
        static_cast<void*>(b), static_cast<void*>(db)}) {
    DeviceSpace::deallocate(q);
  }
  std::printf(
      "%-20s F=%-4lld k=%lld %-6s %-9s direct cudnn %8.3f ms | layer %8.3f ms "
      "| direct/layer %.3f\n",
      p.shape.to_string().c_str(), static_cast<long long>(p.filters),
      static_cast<long long>(p.kernel),
      math == GpuMath::kTf32 ? "tf32" : "strict",
      search == GpuAlgoSearch::kMeasured ? "measured" : "heuristic",
      t_direct * 1e3, t_layer * 1e3, t_direct / t_layer);
  std::printf("%s  layer kernels:\n%s", calls.c_str(),
              layer.describe().c_str());
}

int main_(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (DeviceSpace::device_count() == 0) {
    std::printf(
        "gpu_conv_bench: no CUDA device on this machine: "
        "benchmark not run\n");
    return 0;
  }
  for (const Problem& p : o.problems) {
    for (GpuMath m : o.maths) run(p, m, o.search, o.reps);
  }
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
