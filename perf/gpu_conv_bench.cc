// The convolution layer on one GPU (Convolution<float, DeviceSpace> over a
// grid of one rank) against direct cuDNN on the same problem, timed side by
// side in one run with CUDA events: a training step's three passes,
// forward (+ bias), backward-weights (+ bias) and backward-data. Direct
// cuDNN (CudnnConv, perf/cudnn_baselines.h) runs on dense channels-last
// tensors and filters with the fastest algorithms cuDNN's own timed search
// finds; the layer runs as configured.
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
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "layers/convolution.h"
#include "perf/cli_args.h"
#include "perf/cuda_timing.h"
#include "perf/cudnn_baselines.h"

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

void run(const Problem& p, GpuMath math, GpuAlgoSearch search, int reps) {
  const int nsp = p.shape.ndims() - 2;
  ConvDesc d =
      ConvDesc::make(p.shape[1], p.filters, Shape::filled(nsp, p.kernel));
  d.padding_lower = d.padding_upper = Shape::filled(nsp, p.kernel / 2);
  d.bias = ConvBias::kAdd;
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
  double t_direct = 0, t_layer = 0;
  std::string calls;
  {
    // Direct cuDNN on its own dense tensors, in either storage order.
    CudnnConv direct(d, p.shape, math, StorageOrder::kChannelsLast,
                     ConvRole::kConvolution);
    t_direct = time_of([&] { direct.run(BenchDir::kAll); }, reps);
    CudnnConv first(d, p.shape, math, StorageOrder::kChannelsFirst,
                    ConvRole::kConvolution);
    for (CudnnConv* dc : {&direct, &first}) {
      calls += dc == &direct ? "  direct channels-last  ms:"
                             : "  direct channels-first ms:";
      for (int c = 0; c < CudnnConv::kCalls; ++c) {
        calls += str(" ", CudnnConv::call_name(c), " ",
                     time_of([&] { dc->call(c); }, reps) * 1e3);
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
  for (float* q : {w, dw, b, db}) DeviceSpace::deallocate(q);
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
