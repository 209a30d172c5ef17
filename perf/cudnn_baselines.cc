#include "perf/cudnn_baselines.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/internal/cuda_check.h"
#include "perf/eltwise_case.h"
#include "perf/layer_bench.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

using Array = SpaceArray<float, DeviceSpace>;

constexpr float kOne = 1, kZero = 0;
constexpr std::size_t kWorkspaceLimit = std::size_t{1} << 30;

// A device array of n random values from `seed`.
Array random_array(Index n, unsigned seed) {
  return Array(random_vector<float>(n, seed));
}

// A dense channels-last fp32 tensor of `shape`.
void set_dense(cudnn::TensorDesc* d, const Shape& shape) {
  d->set(CUDNN_DATA_FLOAT, shape,
         dense_strides(shape, StorageOrder::kChannelsLast));
}

// cuDNN's windows run in 2 or 3 spatial dimensions and pad both ends by
// the lower padding: the problem's output must be what that gives
// (`cudnn`: the extents cuDNN computes).
void check_window(const Shape& src, const std::vector<int>& cudnn,
                  const Shape& dst, const char* what) {
  Shape got = Shape::filled(static_cast<int>(cudnn.size()), 0);
  for (int d = 0; d < got.ndims(); ++d) got[d] = cudnn[d];
  require(src.ndims() >= 4 && got == dst, ErrorKind::kUnsupported,
          "--impl=cudnn: cuDNN's ", what, " (2D or 3D, the lower padding at ",
          "both ends) gives an output of ", got, ", the problem's is ", dst);
}

// A 1 x C x 1... tensor (per-channel values).
void set_channels(cudnn::TensorDesc* d, int ndims, Index channels) {
  Shape s = Shape::filled(ndims, 1);
  s[1] = channels;
  d->set(CUDNN_DATA_FLOAT, s, dense_strides(s, StorageOrder::kChannelsFirst));
}

class CudnnPool : public CudnnBaseline {
 public:
  CudnnPool(const PoolDesc& d, const Shape& src)
      : x_(random_array(src.volume(), 1)),
        dx_(random_array(src.volume(), 3)),
        y_(random_array(d.dst_shape(src).volume(), 2)),
        dy_(random_array(d.dst_shape(src).volume(), 4)) {
    require(src.ndims() >= 4, ErrorKind::kUnsupported,
            "--impl=cudnn: cuDNN's pooling takes 2D or 3D problems");
    set_dense(&x_d_, src);
    set_dense(&y_d_, d.dst_shape(src));
    check_cudnn(cudnnCreatePoolingDescriptor(&pool_),
                "cudnnCreatePoolingDescriptor");
    const std::vector<int> window = cudnn::ints(d.kernel),
                           padding = cudnn::ints(d.padding_lower),
                           stride = cudnn::ints(d.stride);
    check_cudnn(cudnnSetPoolingNdDescriptor(
                    pool_, mode(d.kind), CUDNN_PROPAGATE_NAN,
                    static_cast<int>(window.size()), window.data(),
                    padding.data(), stride.data()),
                "cudnnSetPoolingNdDescriptor");
    std::vector<int> out(src.ndims());
    check_cudnn(cudnnGetPoolingNdForwardOutputDim(pool_, x_d_.get(),
                                                  src.ndims(), out.data()),
                "cudnnGetPoolingNdForwardOutputDim");
    check_window(src, out, d.dst_shape(src), "pooling");
    forward();  // the backward reads y
  }
  ~CudnnPool() override { cudnnDestroyPoolingDescriptor(pool_); }

  void run(BenchDir dir) override {
    if (runs_pass(dir, BenchDir::kForward)) forward();
    if (runs_pass(dir, BenchDir::kBackwardData)) {
      check_cudnn(cudnnPoolingBackward(ctx_.handle(), pool_, &kOne, y_d_.get(),
                                       y_.data(), y_d_.get(), dy_.data(),
                                       x_d_.get(), x_.data(), &kZero,
                                       x_d_.get(), dx_.data()),
                  "cudnnPoolingBackward");
    }
  }
  std::string describe() const override {
    return "cuDNN pooling, channels-last (max: deterministic)\n";
  }

 private:
  static cudnnPoolingMode_t mode(PoolKind k) {
    switch (k) {
      case PoolKind::kMax:
        return CUDNN_POOLING_MAX_DETERMINISTIC;
      case PoolKind::kAverageIncludePadding:
        return CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
      case PoolKind::kAverageExcludePadding:
        break;
    }
    return CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  }
  void forward() {
    check_cudnn(cudnnPoolingForward(ctx_.handle(), pool_, &kOne, x_d_.get(),
                                    x_.data(), &kZero, y_d_.get(), y_.data()),
                "cudnnPoolingForward");
  }

  CudnnContext ctx_;
  cudnn::TensorDesc x_d_, y_d_;
  cudnnPoolingDescriptor_t pool_ = nullptr;
  Array x_, dx_, y_, dy_;
};

// Spatial batch normalisation, training: statistics over N and space.
class CudnnBatchNorm : public CudnnBaseline {
 public:
  explicit CudnnBatchNorm(const Shape& s)
      : x_(random_array(s.volume(), 1)),
        y_(random_array(s.volume(), 2)),
        dy_(random_array(s.volume(), 3)),
        dx_(random_array(s.volume(), 4)),
        scale_(random_array(s[1], 5)),
        shift_(random_array(s[1], 6)),
        dscale_(random_array(s[1], 7)),
        dshift_(random_array(s[1], 8)),
        mean_(random_array(s[1], 9)),
        inv_var_(random_array(s[1], 10)),
        running_mean_(random_array(s[1], 11)),
        running_var_(random_array(s[1], 12)) {
    set_dense(&x_d_, s);
    set_channels(&c_d_, s.ndims(), s[1]);
    forward();  // the backward reads the saved statistics
  }

  void run(BenchDir dir) override {
    if (runs_pass(dir, BenchDir::kForward)) forward();
    if (runs_pass(dir, BenchDir::kBackwardData)) {
      check_cudnn(cudnnBatchNormalizationBackward(
                      ctx_.handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero,
                      &kOne, &kZero, x_d_.get(), x_.data(), x_d_.get(),
                      dy_.data(), x_d_.get(), dx_.data(), c_d_.get(),
                      scale_.data(), dscale_.data(), dshift_.data(),
                      kBnormEpsilon, mean_.data(), inv_var_.data()),
                  "cudnnBatchNormalizationBackward");
    }
  }
  std::string describe() const override {
    return "cuDNN spatial batch normalisation (training), channels-last\n";
  }

 private:
  void forward() {
    check_cudnn(cudnnBatchNormalizationForwardTraining(
                    ctx_.handle(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero,
                    x_d_.get(), x_.data(), x_d_.get(), y_.data(), c_d_.get(),
                    scale_.data(), shift_.data(), 0.1, running_mean_.data(),
                    running_var_.data(), kBnormEpsilon, mean_.data(),
                    inv_var_.data()),
                "cudnnBatchNormalizationForwardTraining");
  }

  CudnnContext ctx_;
  cudnn::TensorDesc x_d_, c_d_;
  Array x_, y_, dy_, dx_, scale_, shift_, dscale_, dshift_, mean_, inv_var_,
      running_mean_, running_var_;
};

// ReLU (cudnnActivationForward/Backward) or the sum of two tensors
// (cudnnOpTensor; its backward copies dy into both input gradients, as
// the layer does).
class CudnnPointwise : public CudnnBaseline {
 public:
  CudnnPointwise(EltwiseAlg alg, const Shape& s)
      : alg_(alg),
        x_(random_array(s.volume(), 1)),
        x2_(random_array(alg == EltwiseAlg::kAdd ? s.volume() : 0, 2)),
        y_(random_array(s.volume(), 3)),
        dy_(random_array(s.volume(), 4)),
        dx_(random_array(s.volume(), 5)),
        dx2_(random_array(alg == EltwiseAlg::kAdd ? s.volume() : 0, 6)),
        bytes_(sizeof(float) * s.volume()) {
    set_dense(&x_d_, s);
    if (alg == EltwiseAlg::kRelu) {
      check_cudnn(cudnnCreateActivationDescriptor(&act_),
                  "cudnnCreateActivationDescriptor");
      check_cudnn(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU,
                                               CUDNN_PROPAGATE_NAN, 0.0),
                  "cudnnSetActivationDescriptor");
    } else {
      check_cudnn(cudnnCreateOpTensorDescriptor(&op_),
                  "cudnnCreateOpTensorDescriptor");
      check_cudnn(cudnnSetOpTensorDescriptor(op_, CUDNN_OP_TENSOR_ADD,
                                             CUDNN_DATA_FLOAT,
                                             CUDNN_PROPAGATE_NAN),
                  "cudnnSetOpTensorDescriptor");
    }
  }
  ~CudnnPointwise() override {
    if (act_) cudnnDestroyActivationDescriptor(act_);
    if (op_) cudnnDestroyOpTensorDescriptor(op_);
  }

  void run(BenchDir dir) override {
    const cudnnHandle_t h = ctx_.handle();
    const cudnnTensorDescriptor_t d = x_d_.get();
    if (runs_pass(dir, BenchDir::kForward)) {
      if (act_) {
        check_cudnn(cudnnActivationForward(h, act_, &kOne, d, x_.data(),
                                           &kZero, d, y_.data()),
                    "cudnnActivationForward");
      } else {
        check_cudnn(cudnnOpTensor(h, op_, &kOne, d, x_.data(), &kOne, d,
                                  x2_.data(), &kZero, d, y_.data()),
                    "cudnnOpTensor");
      }
    }
    if (runs_pass(dir, BenchDir::kBackwardData)) {
      if (act_) {
        check_cudnn(cudnnActivationBackward(h, act_, &kOne, d, y_.data(), d,
                                            dy_.data(), d, x_.data(), &kZero,
                                            d, dx_.data()),
                    "cudnnActivationBackward");
      } else {
        for (float* to : {dx_.data(), dx2_.data()}) {
          internal::check_cuda(
              cudaMemcpyAsync(to, dy_.data(), bytes_, cudaMemcpyDeviceToDevice,
                              ctx_.stream()),
              "cudaMemcpyAsync");
        }
      }
    }
  }
  std::string describe() const override {
    return alg_ == EltwiseAlg::kRelu
               ? "cuDNN activation (ReLU), channels-last\n"
               : "cuDNN op-tensor add; backward: two device copies\n";
  }

 private:
  EltwiseAlg alg_;
  CudnnContext ctx_;
  cudnn::TensorDesc x_d_;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnOpTensorDescriptor_t op_ = nullptr;
  Array x_, x2_, y_, dy_, dx_, dx2_;
  std::size_t bytes_;
};

}  // namespace

CudnnConv::CudnnConv(const ConvDesc& d, const Shape& src, GpuMath math,
                     StorageOrder order, ConvRole role)
    : role_(role),
      s1_(random_array(src.volume(), 1)),
      s2_(random_array(src.volume(), 2)),
      d1_(random_array(d.dst_shape(src).volume(), 3)),
      d2_(random_array(d.dst_shape(src).volume(), 4)),
      w_(random_array(d.weights_shape().volume(), 5)),
      dw_(random_array(d.weights_shape().volume(), 6)),
      b_(random_array(role == ConvRole::kConvolution ? d.out_channels
                                                     : d.in_channels,
                      7)),
      db_(random_array(role == ConvRole::kConvolution ? d.out_channels
                                                      : d.in_channels,
                       8)) {
  require(src.ndims() >= 4, ErrorKind::kUnsupported,
          "--impl=cudnn: cuDNN's convolution takes 2D or 3D problems");
  const Shape dst = d.dst_shape(src);
  src_d_.set(CUDNN_DATA_FLOAT, src, dense_strides(src, order));
  dst_d_.set(CUDNN_DATA_FLOAT, dst, dense_strides(dst, order));
  set_channels(&bias_d_, src.ndims(),
               role == ConvRole::kConvolution ? d.out_channels
                                              : d.in_channels);
  w_d_.set(CUDNN_DATA_FLOAT, d.weights_shape(),
           order == StorageOrder::kChannelsLast);
  conv_d_.set(CUDNN_DATA_FLOAT, d.padding_lower, d.stride, d.dilation,
              d.groups);
  check_cudnn(cudnnSetConvolutionMathType(conv_d_.get(),
                                          math == GpuMath::kTf32
                                              ? CUDNN_TENSOR_OP_MATH
                                              : CUDNN_FMA_MATH),
              "cudnnSetConvolutionMathType");
  std::vector<int> out(src.ndims());
  check_cudnn(cudnnGetConvolutionNdForwardOutputDim(
                  conv_d_.get(), src_d_.get(), w_d_.get(), src.ndims(),
                  out.data()),
              "cudnnGetConvolutionNdForwardOutputDim");
  check_window(src, out, dst, "convolution");
  DeviceBuffer scratch(kWorkspaceLimit);
  std::size_t workspace = 0;
  int n = 0;
  // The fastest result that succeeded, fits the limit and keeps to the
  // math asked for (cuDNN's timed results come fastest first).
  auto pick = [&](const auto* perf, const char* pass) {
    int i = 0;
    while (i < n && !(perf[i].status == CUDNN_STATUS_SUCCESS &&
                      perf[i].memory <= kWorkspaceLimit &&
                      (math == GpuMath::kTf32 ||
                       perf[i].mathType == CUDNN_FMA_MATH))) {
      ++i;
    }
    require(i < n, ErrorKind::kUnsupported, "cuDNN has no ", pass,
            " algorithm for this problem");
    workspace = std::max(workspace, perf[i].memory);
    return perf[i].algo;
  };
  const cudnnHandle_t h = ctx_.handle();
  cudnnConvolutionFwdAlgoPerf_t pf[16];
  check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(
                  h, src_d_.get(), s1_.data(), w_d_.get(), w_.data(),
                  conv_d_.get(), dst_d_.get(), d1_.data(), 16, &n, pf,
                  scratch.get(), kWorkspaceLimit),
              "cudnnFindConvolutionForwardAlgorithmEx");
  fwd_ = pick(pf, "forward");
  cudnnConvolutionBwdDataAlgoPerf_t pd[16];
  check_cudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(
                  h, w_d_.get(), w_.data(), dst_d_.get(), d2_.data(),
                  conv_d_.get(), src_d_.get(), s2_.data(), 16, &n, pd,
                  scratch.get(), kWorkspaceLimit),
              "cudnnFindConvolutionBackwardDataAlgorithmEx");
  data_ = pick(pd, "backward-data");
  cudnnConvolutionBwdFilterAlgoPerf_t pw[16];
  check_cudnn(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                  h, src_d_.get(), s1_.data(), dst_d_.get(), d2_.data(),
                  conv_d_.get(), w_d_.get(), dw_.data(), 16, &n, pw,
                  scratch.get(), kWorkspaceLimit),
              "cudnnFindConvolutionBackwardFilterAlgorithmEx");
  filter_ = pick(pw, "backward-filter");
  ctx_.reserve(std::max<std::size_t>(workspace, 1));
}

const char* CudnnConv::call_name(int c) {
  static const char* const names[kCalls] = {"fwd", "bias", "bwd-w",
                                            "bwd-bias", "bwd-data"};
  return c >= 0 && c < kCalls ? names[c] : "?";
}

// The convolution: x = s1, y = d1, dy = d2, dx = s2. The transposed one:
// x = d1, y = s1, dy = s2, dx = d2.
void CudnnConv::call(int c) {
  const cudnnHandle_t h = ctx_.handle();
  void* ws = ctx_.workspace();
  const std::size_t wss = ctx_.workspace_size();
  const bool conv = role_ == ConvRole::kConvolution;
  auto forward = [&](const Array& in, const Array& out) {
    check_cudnn(cudnnConvolutionForward(h, &kOne, src_d_.get(), in.data(),
                                        w_d_.get(), w_.data(), conv_d_.get(),
                                        fwd_, ws, wss, &kZero, dst_d_.get(),
                                        out.data()),
                "cudnnConvolutionForward");
  };
  auto backward_data = [&](const Array& in, const Array& out) {
    check_cudnn(cudnnConvolutionBackwardData(
                    h, &kOne, w_d_.get(), w_.data(), dst_d_.get(), in.data(),
                    conv_d_.get(), data_, ws, wss, &kZero, src_d_.get(),
                    out.data()),
                "cudnnConvolutionBackwardData");
  };
  // The output (and its gradient) the bias belongs to.
  const cudnnTensorDescriptor_t out_d = conv ? dst_d_.get() : src_d_.get();
  switch (c) {
    case 0:
      return conv ? forward(s1_, d1_) : backward_data(d1_, s1_);
    case 1:
      check_cudnn(cudnnAddTensor(h, &kOne, bias_d_.get(), b_.data(), &kOne,
                                 out_d, (conv ? d1_ : s1_).data()),
                  "cudnnAddTensor");
      return;
    case 2:
      check_cudnn(cudnnConvolutionBackwardFilter(
                      h, &kOne, src_d_.get(), (conv ? s1_ : s2_).data(),
                      dst_d_.get(), (conv ? d2_ : d1_).data(), conv_d_.get(),
                      filter_, ws, wss, &kZero, w_d_.get(), dw_.data()),
                  "cudnnConvolutionBackwardFilter");
      return;
    case 3:
      check_cudnn(cudnnConvolutionBackwardBias(h, &kOne, out_d,
                                               (conv ? d2_ : s2_).data(),
                                               &kZero, bias_d_.get(),
                                               db_.data()),
                  "cudnnConvolutionBackwardBias");
      return;
    case 4:
      return conv ? backward_data(d2_, s2_) : forward(s2_, d2_);
  }
}

void CudnnConv::run(BenchDir dir) {
  if (runs_pass(dir, BenchDir::kForward)) call(0), call(1);
  if (runs_pass(dir, BenchDir::kBackwardWeights)) call(2), call(3);
  if (runs_pass(dir, BenchDir::kBackwardData)) call(4);
}

std::string CudnnConv::describe() const {
  return internal::str("cuDNN ",
                       role_ == ConvRole::kConvolution ? "convolution"
                                                       : "transposed "
                                                         "convolution",
                       ": forward algo ", static_cast<int>(fwd_),
                       ", backward-data algo ", static_cast<int>(data_),
                       ", backward-filter algo ", static_cast<int>(filter_),
                       ", workspace ", ctx_.workspace_size(), " bytes\n");
}

std::unique_ptr<CudnnBaseline> make_cudnn_baseline(const BenchOptions& o,
                                                   const ConvProblem& p) {
  switch (o.driver) {
    case ProblemKind::kConvolution:
      return std::make_unique<CudnnConv>(p.desc, p.src_shape, o.gpu_math,
                                         StorageOrder::kChannelsLast,
                                         ConvRole::kConvolution);
    case ProblemKind::kDeconvolution:
      return std::make_unique<CudnnConv>(p.desc, p.src_shape, o.gpu_math,
                                         StorageOrder::kChannelsLast,
                                         ConvRole::kTransposed);
    case ProblemKind::kPooling:
      return std::make_unique<CudnnPool>(pool_desc(p, o.alg), p.src_shape);
    case ProblemKind::kBatchNorm:
      return std::make_unique<CudnnBatchNorm>(p.src_shape);
    case ProblemKind::kGroupNorm:
      require(false, ErrorKind::kUnsupported,
              "--impl=cudnn: no group normalisation baseline");
      break;
    case ProblemKind::kInterpolate:  // refused by the options for the GPU
      require(false, ErrorKind::kUnsupported,
              "--impl=cudnn: no interpolation baseline");
      break;
    case ProblemKind::kElementwise:
      break;
  }
  require(o.eltwise_alg == EltwiseAlg::kRelu ||
              o.eltwise_alg == EltwiseAlg::kAdd,
          ErrorKind::kUnsupported, "--impl=cudnn: cuDNN has no operation for ",
          "--eltwise --alg=", to_string(o.eltwise_alg),
          " (its baselines are relu and add)");
  return std::make_unique<CudnnPointwise>(o.eltwise_alg, p.src_shape);
}

}  // namespace distconv
