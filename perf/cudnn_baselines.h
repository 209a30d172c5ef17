// The GPU baselines (GPU builds only): plain cuDNN calls on one whole,
// dense, channels-last fp32 problem in one process, on tensors of their own
// holding random values, for distconv_bench --device=gpu --impl=cudnn
// (every driver cuDNN has an operation for) and gpu_conv_bench. The calls
// are queued on the legacy default stream.
//
//   std::unique_ptr<CudnnBaseline> base = make_cudnn_baseline(o, problem);
//   base->run(BenchDir::kAll);     // fwd, bwd_w, bwd_d as the driver counts
#ifndef DISTCONV_PERF_CUDNN_BASELINES_H_
#define DISTCONV_PERF_CUDNN_BASELINES_H_

#include <memory>
#include <string>

#include "distconv/conv_desc.h"
#include "distconv/device_space.h"
#include "distconv/shape.h"
#include "kernels/cudnn/cudnn_context.h"
#include "kernels/cudnn/cudnn_descriptors.h"
#include "kernels/gpu_conv_options.h"
#include "perf/bench_options.h"
#include "perf/conv_problem.h"
#include "perf/layer_case.h"

namespace distconv {

class CudnnBaseline {
 public:
  virtual ~CudnnBaseline() = default;
  // The calls of the passes in `dir`.
  virtual void run(BenchDir dir) = 0;
  // What runs ("cudnn: fwd algo 1, ...").
  virtual std::string describe() const = 0;
};

// The baseline of o.driver (and o.alg, o.eltwise_alg) on problem p;
// throws kUnsupported where cuDNN has no such operation (leaky ReLU,
// concatenation, nearest upsampling).
std::unique_ptr<CudnnBaseline> make_cudnn_baseline(const BenchOptions& o,
                                                   const ConvProblem& p);

// What a convolution baseline computes: the convolution, or the
// transposed convolution it is the adjoint of (whose forward is the
// convolution's backward-data, and whose backward-data is its forward).
enum class ConvRole { kConvolution, kTransposed };

// Forward (+ bias), backward-weights (+ bias), backward-data with the
// fastest algorithms cuDNN's own timed search finds within 1 GiB of
// workspace that keep to `math`.
class CudnnConv : public CudnnBaseline {
 public:
  // d and src: the convolution (for kTransposed the adjoint of the
  // transposed one, src its output, as a ConvProblem holds it).
  CudnnConv(const ConvDesc& d, const Shape& src, GpuMath math,
            StorageOrder order, ConvRole role);

  static constexpr int kCalls = 5;
  // "fwd", "bias", "bwd-w", "bwd-bias", "bwd-data": the calls of a step.
  static const char* call_name(int c);
  void call(int c);
  void run(BenchDir dir) override;
  std::string describe() const override;

 private:
  ConvRole role_;
  CudnnContext ctx_;
  cudnn::TensorDesc src_d_, dst_d_, bias_d_;
  cudnn::FilterDesc w_d_;
  cudnn::ConvolutionDesc conv_d_;
  // The convolution's src-shaped (s1, s2) and dst-shaped (d1, d2) tensors,
  // the weights, the bias (of the output's channels) and their gradients.
  SpaceArray<float, DeviceSpace> s1_, s2_, d1_, d2_, w_, dw_, b_, db_;
  cudnnConvolutionFwdAlgo_t fwd_;
  cudnnConvolutionBwdDataAlgo_t data_;
  cudnnConvolutionBwdFilterAlgo_t filter_;
};

}  // namespace distconv

#endif  // DISTCONV_PERF_CUDNN_BASELINES_H_
