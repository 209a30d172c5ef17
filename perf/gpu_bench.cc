// distconv_bench --device=gpu (GPU builds): see perf/gpu_bench.h.
#include "perf/gpu_bench.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/scatter_gather.h"
#include "perf/case_bench.h"
#include "perf/cudnn_baselines.h"
#include "perf/layer_bench.h"
#include "perf/layer_cases.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

using internal::check_cuda;

// A CUDA stream of the run's own (not waiting for the legacy default
// stream), destroyed with it.
class Stream {
 public:
  Stream() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

void synchronize() {
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// Uniform values in [-1, 1) in t's shard, from `seed` and the rank.
template <typename T>
void fill_random(DistTensor<T>& t, unsigned seed) {
  std::mt19937_64 rng(seed * 7919u + static_cast<unsigned>(t.grid().rank()));
  std::uniform_real_distribution<double> u(-1, 1);
  t.interior().for_each(
      [&](const Shape&, T& v) { v = static_cast<T>(u(rng)); });
}

// `from`'s shard into `to` (any layouts of the same distribution; halo
// cells zero).
template <typename T>
void upload(const DistTensor<T>& from, DistTensor<T, DeviceSpace>& to) {
  DistTensor<T> staging(to.grid(), to.layout());
  const StridedView<const T> in = from.interior();
  staging.interior().for_each([&](const Shape& i, T& v) { v = in(i); });
  DeviceSpace::copy_to_device(to.data(), staging.data(),
                              sizeof(T) * staging.size());
}

// The gathered global tensor on rank 0 (empty elsewhere).
template <typename T>
std::vector<T> gathered_from_device(const DistTensor<T, DeviceSpace>& t) {
  std::vector<T> buffer(t.size());
  DeviceSpace::copy_to_host(buffer.data(), t.data(), sizeof(T) * t.size());
  return gathered(DistTensor<T>::wrap(t.grid(), t.layout(), buffer.data(),
                                      static_cast<Index>(buffer.size())));
}

// What GFLOP/s counts, as the host drivers count it.
double operations(const BenchOptions& o, const ConvProblem& p) {
  switch (o.driver) {
    case ProblemKind::kConvolution:
    case ProblemKind::kDeconvolution:
      return conv_flops(p, o.dir);
    case ProblemKind::kPooling: {
      const PoolDesc d = pool_desc(p, o.alg);
      return pool_operations(d, d.dst_shape(p.src_shape), o.dir);
    }
    case ProblemKind::kBatchNorm:
    case ProblemKind::kGroupNorm:  // refused by the options for the GPU
      return bnorm_flops(p.src_shape, o.dir);
    case ProblemKind::kInterpolate:  // refused by the options for the GPU
      return interp_operations(interp_desc(p.src_shape), p.src_shape, o.dir);
    case ProblemKind::kElementwise:
      break;
  }
  return eltwise_operations(o.eltwise_alg, p.src_shape, o.dir);
}

// The host driver's PASS bound for the problem (the host layer and the
// GPU one round differently, as each differs from the reference); with
// --math=tf32, the bound of TF32's 10-bit inputs (as cudnn_conv_test's).
template <typename T>
double tolerance(const BenchOptions& o, const ConvProblem& p) {
  // bf16: outputs rounded (as on the host), and weight and bias gradients
  // that cuDNN rounds to bf16 per piece before they are summed in fp32.
  if (std::is_same_v<T, bf16>) return 0x1p-7;
  if (o.driver == ProblemKind::kConvolution ||
      o.driver == ProblemKind::kDeconvolution) {
    if (std::is_same_v<T, float> && o.gpu_math == GpuMath::kTf32) return 2e-2;
    return conv_tolerance<T>(p);
  }
  if (!std::is_same_v<T, float>) return 1e-10;
  return o.driver == ProblemKind::kBatchNorm ? 1e-4 : 1e-5;
}

template <typename T>
BenchResult run_layer(const BenchOptions& o, const ConvProblem& p) {
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_for(o, p.src_shape, world_ranks(), p));
  Stream stream;
  LayerCase<T, DeviceSpace> dev = make_layer_case<T, DeviceSpace>(
      o, p, grid, Exec<DeviceSpace>(stream.get()));
  print_plan(o, grid.rank(), dev.plan);
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  auto run = [&] {
    const double waited = dev.run(o.dir);
    synchronize();
    return waited;
  };
  BenchResult r;
  if (o.mode == BenchMode::kPerf) {
    unsigned seed = 1;
    for (auto& t : dev.inputs) {
      DistTensor<T> values(grid, t.tensor->layout());
      fill_random(values, seed++);
      upload(values, *t.tensor);
    }
    if (!fwd && dev.forward) dev.forward();  // what the backward reads
    synchronize();
    dev.take_wait();
    time_runs(o, run, &r);
    r.gflops = operations(o, p) / (r.median_ms * 1e-3) / 1e9;
    return r;
  }
  LayerCase<T, HostSpace> host =
      make_layer_case<T, HostSpace>(o, p, grid, Exec<HostSpace>());
  unsigned seed = 1;
  for (std::size_t i = 0; i < host.inputs.size(); ++i) {
    fill_random(*host.inputs[i].tensor, seed++);
    upload(*host.inputs[i].tensor, *dev.inputs[i].tensor);
  }
  // y is compared in any case (case_result_written).
  if (!fwd) {
    host.forward();
    dev.forward();
    synchronize();
    host.take_wait();
    dev.take_wait();
  }
  time_once(run, &r);
  host.run(o.dir);
  r.gflops = operations(o, p) / (r.median_ms * 1e-3) / 1e9;
  std::vector<std::vector<Compute<T>>> got;
  for (const auto& t : dev.outputs) {
    got.push_back(widened(gathered_from_device(*t.tensor)));
  }
  for (const auto& a : dev.grads) got.push_back(a.array.read());
  const std::vector<std::vector<Compute<T>>> want = case_results(host);
  if (grid.rank() == 0) {
    score_case(host, o.dir, got, want, tolerance<T>(o, p), &r);
  }
  return r;
}

BenchResult run_cudnn(const BenchOptions& o, const ConvProblem& p) {
  const std::unique_ptr<CudnnBaseline> base = make_cudnn_baseline(o, p);
  if (o.verbose) std::printf("%s", base->describe().c_str());
  synchronize();
  BenchResult r;
  time_runs(
      o,
      [&] {
        base->run(o.dir);
        synchronize();
        return 0.0;
      },
      &r);
  r.gflops = operations(o, p) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

BenchResult run_gpu_bench(const BenchOptions& o, const ConvProblem& p) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  DeviceSpace::use_device_of_rank(rank);  // rank r on GPU r % GPUs
  if (o.impl == BenchImpl::kCudnn) return run_cudnn(o, p);
  return for_dt(o, [&](auto t) { return run_layer<decltype(t)>(o, p); });
}

}  // namespace distconv
