#include "kernels/cudnn/conv.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/halo_layout.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/narrow_kernels.h"
#include "kernels/cudnn/cudnn_descriptors.h"

namespace distconv {
namespace {

using internal::check_cuda;

const char* algorithm_name(ConvPass pass, int algo) {
  static const char* const fwd[] = {"implicit_gemm", "implicit_precomp_gemm",
                                    "gemm",          "direct",
                                    "fft",           "fft_tiling",
                                    "winograd",      "winograd_nonfused"};
  static const char* const data[] = {
      "algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"};
  static const char* const filter[] = {
      "algo_0",    "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused",
      "fft_tiling"};
  auto pick = [&](const char* const* names, int n) {
    return algo >= 0 && algo < n ? names[algo] : "unknown";
  };
  switch (pass) {
    case ConvPass::kForward:
      return pick(fwd, 8);
    case ConvPass::kBackwardData:
      return pick(data, 6);
    default:
      return pick(filter, 7);
  }
}

// Elements from a view's first to its last element, inclusive.
Index span_of(const Shape& extent, const Shape& strides) {
  Index span = 1;
  for (int d = 0; d < extent.ndims(); ++d) span += (extent[d] - 1) * strides[d];
  return span;
}

// One algorithm result, whichever pass it is of.
struct Candidate {
  int algo;
  cudnnStatus_t status;
  std::size_t memory;
  cudnnMathType_t math;
  float ms;  // timed searches only
};

template <typename Perf>
std::vector<Candidate> candidates(const Perf* perf, int n) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({static_cast<int>(perf[i].algo), perf[i].status,
                   perf[i].memory, perf[i].mathType, perf[i].time});
  }
  return out;
}

}  // namespace

template <typename T>
struct CudnnConv<T>::Impl {
  // bf16, fp16: the fp32 parameters are rounded for cuDNN, gradients
  // widened.
  static constexpr bool kNarrow = distconv::kNarrow<T>;

  CudnnContext* ctx;
  ConvPass pass;
  GpuConvOptions options;
  bool empty = false;   // a zero extent: nothing to compute
  bool last = false;    // cuDNN runs channels-last (else channels-first)
  bool x_copy = false;  // cuDNN's input side is a padded dense copy
  bool y_copy = false;  // cuDNN's output side is a dense copy
  Shape src_extent, src_strides, dst_extent, dst_strides, w_extent;
  cudnn::TensorDesc src, dst;  // the views
  cudnn::TensorDesc x, y;      // what cuDNN runs on: the views or copies
  cudnn::TensorDesc inner;     // the input copy's cells that are src's
  Index inner_offset = 0, x_span = 0, y_span = 0;
  cudnn::TensorDesc bias;                // (1, F, 1...)
  cudnn::FilterDesc w;                   // cuDNN's filter, in its layout
  cudnn::TensorDesc w_caller, w_kernel;  // the weights as tensors
  cudnn::ConvolutionDesc conv;
  DeviceBuffer padded, out, w_copy;  // the copies; channels-last weights
  // kNarrow: the weights (caller's layout) and bias (or their gradients)
  // in T.
  DeviceBuffer w_narrow, b_narrow;
  int algo = 0;
  float algo_ms = 0;
  std::string problem;  // see CudnnConv::problem()
  std::size_t workspace = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;

  const cudnn::Scale<T> one = 1, zero = 0;
  cudnnHandle_t h() const { return ctx->handle(); }
  void* ws() const { return ctx->workspace(); }

  Impl(CudnnContext& c, const ConvDesc& desc, const Shape& se, const Shape& ss,
       const Shape& de, const Shape& ds, ConvPass p, const GpuConvOptions& o);
  // Sets cuDNN up on the views themselves (asymmetric padding aside), or,
  // with `copies`, on dense channels-first copies, and picks an algorithm:
  // `cached` where given (from cuDNN's heuristic list, without a timed
  // search), else by the options' search; false where none is usable.
  bool configure(const ConvDesc& desc, bool copies,
                 const GpuAlgoCache::Entry* cached);

  void transform(const cudnn::TensorDesc& from, const void* from_data,
                 const cudnn::TensorDesc& to, void* to_data,
                 const char* what) const {
    check_cudnn(cudnnTransformTensor(h(), &one, from.get(), from_data, &zero,
                                     to.get(), to_data),
                what);
  }
  // `values` (n of them) as cuDNN reads them: themselves, or rounded to
  // T in `narrow` on the stream.
  const void* narrowed(const P* values, const DeviceBuffer& narrow,
                       Index n) const {
    if constexpr (kNarrow) {
      launch_narrow(values, static_cast<T*>(narrow.get()), n, ctx->stream());
      return narrow.get();
    } else {
      return values;
    }
  }
  // The weights as cuDNN reads them (rounded and rearranged on the stream
  // if need be).
  const void* kernel_weights(const P* weights) const {
    const void* w_t = narrowed(weights, w_narrow, w_extent.volume());
    if (w_copy.get() == nullptr) return w_t;
    transform(w_caller, w_t, w_kernel, w_copy.get(),
              "cudnnTransformTensor of the weights");
    return w_copy.get();
  }
  // Adds n gradients of T (kNarrow: in `narrow`) to `to`.
  void add_widened(const DeviceBuffer& narrow, P* to, Index n) const {
    if constexpr (kNarrow) {
      launch_add_widened(static_cast<const T*>(narrow.get()), to, n,
                         ctx->stream());
    }
  }
  T* inner_cells() const {
    return static_cast<T*>(padded.get()) + inner_offset;
  }
  // cuDNN's input: the view itself, or its cells copied into the padding.
  const void* input(const T* data) const {
    if (!x_copy) return data;
    transform(src, data, inner, inner_cells(),
              "cudnnTransformTensor into the input copy");
    return padded.get();
  }
  // cuDNN's output gradient: the view itself, or a copy of it.
  const void* gradient(const T* data) const {
    if (!y_copy) return data;
    transform(dst, data, y, out.get(),
              "cudnnTransformTensor into the output copy");
    return out.get();
  }

  std::vector<Candidate> search(bool measured) const;
  std::size_t workspace_of(int a) const;
};

template <typename T>
CudnnConv<T>::Impl::Impl(CudnnContext& c, const ConvDesc& desc, const Shape& se,
                         const Shape& ss, const Shape& de, const Shape& ds,
                         ConvPass p, const GpuConvOptions& o)
    : ctx(&c),
      pass(p),
      options(o),
      src_extent(se),
      src_strides(ss),
      dst_extent(de),
      dst_strides(ds),
      w_extent(desc.weights_shape()) {
  const int nd = se.ndims();
  require(nd == 4 || nd == 5, ErrorKind::kUnsupported,
          "cuDNN convolution: 2D or 3D views, not extent ", se);
  problem = internal::str(
      "pass ", static_cast<int>(p), " type ",
      static_cast<int>(cudnn::data_type<T>()), " math ",
      static_cast<int>(o.math), " channels ", desc.in_channels, " ",
      desc.out_channels, " groups ", desc.groups, " kernel ", desc.kernel,
      " stride ", desc.stride, " dilation ", desc.dilation, " padding ",
      desc.padding_lower, " ", desc.padding_upper, " src ", se, " ", ss,
      " dst ", de, " ", ds);
  empty = se.volume() == 0 || de.volume() == 0;
  if (empty) return;
  const cudnnDataType_t type = cudnn::data_type<T>();
  src.set(type, se, ss);
  dst.set(type, de, ds);
  Shape bias_extent = Shape::filled(nd, 1);
  bias_extent[1] = de[1];
  bias.set(type, bias_extent,
           dense_strides(bias_extent, StorageOrder::kChannelsFirst));
  if (kNarrow) {
    w_narrow = DeviceBuffer(sizeof(T) * w_extent.volume());
    b_narrow = DeviceBuffer(sizeof(T) * de[1]);
  }
  // A timed search's result in the cache is taken on its layout where it
  // is usable here; otherwise cuDNN's algorithms are searched as without
  // a cache. One lookup per kernel.
  GpuAlgoCache* cache = options.search == GpuAlgoSearch::kMeasured
                            ? options.cache.get()
                            : nullptr;
  std::optional<GpuAlgoCache::Entry> cached;
  if (cache != nullptr) cached = cache->find(problem_key(problem));
  const bool taken = cached && configure(desc, cached->copies, &*cached);
  if (cache != nullptr) cache->record_lookup(taken);
  require(taken || configure(desc, false, nullptr) ||
              configure(desc, true, nullptr),
          ErrorKind::kUnsupported,
          "cuDNN has no algorithm for this convolution (input ", se,
          ", output ", de, ") within a workspace of ", options.workspace_limit,
          " bytes");
  workspace = workspace_of(algo);
  ctx->reserve(workspace);
}

template <typename T>
bool CudnnConv<T>::Impl::configure(const ConvDesc& desc, bool copies,
                                   const GpuAlgoCache::Entry* cached) {
  const Shape& se = src_extent;
  const Shape& de = dst_extent;
  const int nd = se.ndims();
  const cudnnDataType_t type = cudnn::data_type<T>();
  last = !copies && src_strides[1] <= src_strides[nd - 1];
  const StorageOrder order =
      last ? StorageOrder::kChannelsLast : StorageOrder::kChannelsFirst;
  x_copy = copies || desc.padding_lower != desc.padding_upper;
  y_copy = copies;
  Shape pads = desc.padding_lower;
  inner_offset = 0;
  if (x_copy) {
    Shape pe = se;
    for (int d = 2; d < nd; ++d) {
      pe[d] += desc.padding_lower[d - 2] + desc.padding_upper[d - 2];
    }
    const Shape ps = dense_strides(pe, order);
    for (int d = 2; d < nd; ++d) {
      inner_offset += desc.padding_lower[d - 2] * ps[d];
    }
    x.set(type, pe, ps);
    inner.set(type, se, ps);
    padded = DeviceBuffer(sizeof(T) * pe.volume());
    x_span = pe.volume();
    pads = Shape::filled(nd - 2, 0);
  } else {
    x.set(type, se, src_strides);
    x_span = span_of(se, src_strides);
  }
  if (y_copy) {
    y.set(type, de, dense_strides(de, order));
    out = DeviceBuffer(sizeof(T) * de.volume());
    y_span = de.volume();
  } else {
    y.set(type, de, dst_strides);
    y_span = span_of(de, dst_strides);
  }
  w.set(type, w_extent, last);
  w_copy = DeviceBuffer();
  if (last) {
    w_caller.set(type, w_extent,
                 dense_strides(w_extent, StorageOrder::kChannelsFirst));
    w_kernel.set(type, w_extent,
                 dense_strides(w_extent, StorageOrder::kChannelsLast));
    w_copy = DeviceBuffer(sizeof(T) * w_extent.volume());
  }
  conv.set(cudnn::compute_type<T>(), pads, desc.stride, desc.dilation,
           desc.groups);
  // The input side's extent cuDNN derives must be the window's output.
  std::vector<int> dims(nd);
  check_cudnn(cudnnGetConvolutionNdForwardOutputDim(conv.get(), x.get(),
                                                    w.get(), nd, dims.data()),
              "cudnnGetConvolutionNdForwardOutputDim");
  for (int d = 0; d < nd; ++d) {
    require(dims[d] == de[d], ErrorKind::kUnsupported,
            "cuDNN convolution: the output of input ", se, " would be ",
            "dimension ", d, " = ", dims[d], ", not the window's ", de);
  }
  if (std::is_same_v<T, float>) {
    math =
        options.math == GpuMath::kTf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  } else if (kNarrow) {
    math = CUDNN_TENSOR_OP_MATH;
  }
  check_cudnn(cudnnSetConvolutionMathType(conv.get(), math),
              "cudnnSetConvolutionMathType");
  const bool measured = options.search == GpuAlgoSearch::kMeasured;
  const auto pick = [&](const std::vector<Candidate>& list,
                        const GpuAlgoCache::Entry* only) {
    for (const Candidate& k : list) {
      if (only && (k.algo != only->algorithm || k.math != only->math)) {
        continue;
      }
      if (k.status != CUDNN_STATUS_SUCCESS) continue;
      if (k.memory > options.workspace_limit) continue;
      if (std::is_same_v<T, float> && options.math == GpuMath::kStrict &&
          k.math != CUDNN_FMA_MATH) {
        continue;
      }
      algo = k.algo;
      algo_ms = only ? only->ms : measured ? k.ms : 0.0f;
      math = k.math;  // the chosen algorithm's (cuDNN's heuristics give it)
      check_cudnn(cudnnSetConvolutionMathType(conv.get(), math),
                  "cudnnSetConvolutionMathType");
      return true;
    }
    return false;
  };
  // A cached choice from cuDNN's heuristic list: no run; it gives the
  // algorithm's workspace.
  if (cached != nullptr) return pick(search(false), cached);
  return pick(search(measured), nullptr);
}

template <typename T>
std::vector<Candidate> CudnnConv<T>::Impl::search(bool measured) const {
  constexpr int kMax = 16;
  int n = 0;
  if (!measured) {
    switch (pass) {
      case ConvPass::kForward: {
        cudnnConvolutionFwdAlgoPerf_t perf[kMax];
        check_cudnn(
            cudnnGetConvolutionForwardAlgorithm_v7(
                h(), x.get(), w.get(), conv.get(), y.get(), kMax, &n, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
        return candidates(perf, n);
      }
      case ConvPass::kBackwardData: {
        cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
        check_cudnn(
            cudnnGetConvolutionBackwardDataAlgorithm_v7(
                h(), w.get(), y.get(), conv.get(), x.get(), kMax, &n, perf),
            "cudnnGetConvolutionBackwardDataAlgorithm_v7");
        return candidates(perf, n);
      }
      default: {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
        check_cudnn(
            cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                h(), x.get(), y.get(), conv.get(), w.get(), kMax, &n, perf),
            "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
        return candidates(perf, n);
      }
    }
  }
  // Timed runs on scratch arrays as large as the real ones.
  DeviceBuffer xa(sizeof(T) * x_span);
  DeviceBuffer ya(sizeof(T) * y_span);
  DeviceBuffer wa(sizeof(T) * w_extent.volume());
  std::size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  const std::size_t ws_bytes = std::min(options.workspace_limit, free / 2);
  DeviceBuffer wsa(ws_bytes);
  switch (pass) {
    case ConvPass::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(
                      h(), x.get(), xa.get(), w.get(), wa.get(), conv.get(),
                      y.get(), ya.get(), kMax, &n, perf, wsa.get(), ws_bytes),
                  "cudnnFindConvolutionForwardAlgorithmEx");
      return candidates(perf, n);
    }
    case ConvPass::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      check_cudnn(cudnnFindConvolutionBackwardDataAlgorithmEx(
                      h(), w.get(), wa.get(), y.get(), ya.get(), conv.get(),
                      x.get(), xa.get(), kMax, &n, perf, wsa.get(), ws_bytes),
                  "cudnnFindConvolutionBackwardDataAlgorithmEx");
      return candidates(perf, n);
    }
    default: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      check_cudnn(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                      h(), x.get(), xa.get(), y.get(), ya.get(), conv.get(),
                      w.get(), wa.get(), kMax, &n, perf, wsa.get(), ws_bytes),
                  "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      return candidates(perf, n);
    }
  }
}

template <typename T>
std::size_t CudnnConv<T>::Impl::workspace_of(int a) const {
  std::size_t bytes = 0;
  switch (pass) {
    case ConvPass::kForward:
      check_cudnn(cudnnGetConvolutionForwardWorkspaceSize(
                      h(), x.get(), w.get(), conv.get(), y.get(),
                      static_cast<cudnnConvolutionFwdAlgo_t>(a), &bytes),
                  "cudnnGetConvolutionForwardWorkspaceSize");
      break;
    case ConvPass::kBackwardData:
      check_cudnn(cudnnGetConvolutionBackwardDataWorkspaceSize(
                      h(), w.get(), y.get(), conv.get(), x.get(),
                      static_cast<cudnnConvolutionBwdDataAlgo_t>(a), &bytes),
                  "cudnnGetConvolutionBackwardDataWorkspaceSize");
      break;
    default:
      check_cudnn(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                      h(), x.get(), y.get(), conv.get(), w.get(),
                      static_cast<cudnnConvolutionBwdFilterAlgo_t>(a), &bytes),
                  "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  }
  return bytes;
}

template <typename T>
CudnnConv<T>::CudnnConv(CudnnContext& context, const ConvDesc& desc,
                        const Shape& src_extent, const Shape& src_strides,
                        const Shape& dst_extent, const Shape& dst_strides,
                        ConvPass pass, const GpuConvOptions& options)
    : impl_(std::make_unique<Impl>(context, desc, src_extent, src_strides,
                                   dst_extent, dst_strides, pass, options)) {}
template <typename T>
CudnnConv<T>::~CudnnConv() = default;
template <typename T>
CudnnConv<T>::CudnnConv(CudnnConv&&) noexcept = default;
template <typename T>
CudnnConv<T>& CudnnConv<T>::operator=(CudnnConv&&) noexcept = default;

template <typename T>
std::string CudnnConv<T>::implementation() const {
  const Impl& s = *impl_;
  if (s.empty) return "cudnn: empty";
  std::string out = std::string("cudnn ") + algorithm_name(s.pass, s.algo) +
                    (s.last ? ", channels-last" : ", channels-first");
  if (s.math == CUDNN_TENSOR_OP_MATH) {
    out += std::is_same_v<T, float> ? ", tf32" : ", tensor cores";
  }
  if (s.y_copy) return out + ", dense copies";
  return out + (s.x_copy ? ", padded input copy" : ", in place");
}

template <typename T>
int CudnnConv<T>::algorithm() const {
  return impl_->algo;
}

template <typename T>
const std::string& CudnnConv<T>::problem() const {
  return impl_->problem;
}

template <typename T>
float CudnnConv<T>::algorithm_ms() const {
  return impl_->algo_ms;
}

template <typename T>
const GpuConvOptions& CudnnConv<T>::options() const {
  return impl_->options;
}

template <typename T>
int CudnnConv<T>::math() const {
  return static_cast<int>(impl_->math);
}

template <typename T>
bool CudnnConv<T>::on_copies() const {
  return impl_->y_copy;
}

template <typename T>
void CudnnConv<T>::set_algorithm(int algorithm, int math) {
  Impl& s = *impl_;
  if (s.empty || (algorithm == s.algo && math == s.math)) return;
  const auto set_math = [&](cudnnMathType_t m) {
    check_cudnn(cudnnSetConvolutionMathType(s.conv.get(), m),
                "cudnnSetConvolutionMathType");
  };
  set_math(static_cast<cudnnMathType_t>(math));
  std::size_t workspace = 0;
  try {
    workspace = s.workspace_of(algorithm);  // throws for an unknown one
  } catch (...) {
    set_math(s.math);  // unchanged
    throw;
  }
  s.math = static_cast<cudnnMathType_t>(math);
  s.workspace = workspace;
  s.algo = algorithm;
  s.ctx->reserve(s.workspace);
}

template <typename T>
void CudnnConv<T>::forward(View<const T> src, const P* weights, const P* bias,
                           View<T> dst) const {
  const Impl& s = *impl_;
  if (s.empty) return;
  void* y = s.y_copy ? s.out.get() : dst.data();
  check_cudnn(cudnnConvolutionForward(
                  s.h(), &s.one, s.x.get(), s.input(src.data()), s.w.get(),
                  s.kernel_weights(weights), s.conv.get(),
                  static_cast<cudnnConvolutionFwdAlgo_t>(s.algo), s.ws(),
                  s.workspace, &s.zero, s.y.get(), y),
              "cudnnConvolutionForward");
  if (bias != nullptr) {
    check_cudnn(cudnnAddTensor(s.h(), &s.one, s.bias.get(),
                               s.narrowed(bias, s.b_narrow, s.dst_extent[1]),
                               &s.one, s.y.get(), y),
                "cudnnAddTensor of the bias");
  }
  if (s.y_copy) {
    s.transform(s.y, y, s.dst, dst.data(),
                "cudnnTransformTensor out of the output copy");
  }
}

template <typename T>
void CudnnConv<T>::backward_data(View<const T> diff_dst, const P* weights,
                                 View<T> diff_src) const {
  const Impl& s = *impl_;
  if (s.empty) return;
  void* dx = s.x_copy ? s.padded.get() : diff_src.data();
  check_cudnn(cudnnConvolutionBackwardData(
                  s.h(), &s.one, s.w.get(), s.kernel_weights(weights),
                  s.y.get(), s.gradient(diff_dst.data()), s.conv.get(),
                  static_cast<cudnnConvolutionBwdDataAlgo_t>(s.algo), s.ws(),
                  s.workspace, &s.zero, s.x.get(), dx),
              "cudnnConvolutionBackwardData");
  if (s.x_copy) {
    s.transform(s.inner, s.inner_cells(), s.src, diff_src.data(),
                "cudnnTransformTensor out of the input-gradient copy");
  }
}

template <typename T>
void CudnnConv<T>::backward_weights(View<const T> src, View<const T> diff_dst,
                                    P* diff_weights, P* diff_bias) const {
  const Impl& s = *impl_;
  if (s.empty) return;
  const bool rearrange = s.w_copy.get() != nullptr;
  // Where cuDNN's weight gradient goes, and the caller's layout's copy of
  // it: added into diff_weights, or (kNarrow) written to w_narrow and
  // widened into it.
  void* caller = Impl::kNarrow ? s.w_narrow.get() : diff_weights;
  const auto& caller_beta = Impl::kNarrow ? s.zero : s.one;
  const void* dy = s.gradient(diff_dst.data());
  check_cudnn(
      cudnnConvolutionBackwardFilter(
          s.h(), &s.one, s.x.get(), s.input(src.data()), s.y.get(), dy,
          s.conv.get(), static_cast<cudnnConvolutionBwdFilterAlgo_t>(s.algo),
          s.ws(), s.workspace, rearrange ? &s.zero : &caller_beta, s.w.get(),
          rearrange ? s.w_copy.get() : caller),
      "cudnnConvolutionBackwardFilter");
  if (rearrange) {  // into the caller's (F, C / groups, k...) layout
    check_cudnn(
        cudnnTransformTensor(s.h(), &s.one, s.w_kernel.get(), s.w_copy.get(),
                             &caller_beta, s.w_caller.get(), caller),
        "cudnnTransformTensor of the weight gradient");
  }
  s.add_widened(s.w_narrow, diff_weights, s.w_extent.volume());
  if (diff_bias != nullptr) {
    void* bias_out = Impl::kNarrow ? s.b_narrow.get() : diff_bias;
    check_cudnn(cudnnConvolutionBackwardBias(s.h(), &s.one, s.y.get(), dy,
                                             &caller_beta, s.bias.get(),
                                             bias_out),
                "cudnnConvolutionBackwardBias");
    s.add_widened(s.b_narrow, diff_bias, s.dst_extent[1]);
  }
}

#define DISTCONV_INSTANTIATE(T) template class CudnnConv<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
