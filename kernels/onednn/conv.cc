#include "kernels/onednn/conv.h"

#include <dnnl.hpp>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "kernels/onednn/block16.h"
#include "kernels/onednn/conv_descs.h"

namespace distconv::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

Tag channels_last(int ndims) { return ndims == 4 ? Tag::nhwc : Tag::ndhwc; }

// Channels per group from which backward-weights runs on copies of the
// activations in oneDNN's 16-channel blocked layout. Measured with oneDNN
// 2.6: its channels-last backward-weights kernel (jit:avx512_core, with bias, 1
// thread) is slower than its blocked one from 64 channels on (148 vs 111 ms
// at 8x64x128², 66 vs 52 ms at 1x128x128²), by more than the two copies
// cost (3 ms each at 8x64x128²); at 32 channels it is a draw (114 vs 109 ms
// at 2x32x512²) and at 16 channels-last wins (54 vs 54 ms plus the copies
// at 1x16x1024²).
constexpr Index kBlockedBackwardWeightsChannels = 64;

Tag blocked16(int ndims) { return ndims == 4 ? Tag::nChw16c : Tag::nCdhw16c; }

bool wants_blocked_backward_weights(const ConvDesc& d) {
  return std::min(d.in_channels, d.out_channels) / d.groups >=
         kBlockedBackwardWeightsChannels;
}

// Output channels per group from which backward-data runs as the adjoint
// forward convolution (see adjoint_forward). Measured with oneDNN 2.6:
// its channels-last forward kernel (brgconv:avx512_core, 1 thread) beats
// its backward-data kernel (jit:avx512_core) on the same problem by
// 1.08-1.31x from 8 such channels on (8x64->64 128² 3x3: 40.0 vs 48.1 ms;
// 1x16->16 1024²: 22.8 vs 29.8 ms; 3D 1x16->16 64³: 18.2 vs 21.5 ms;
// 1x8->8 1024²: 12.2 vs 13.2 ms) and loses below (1x16->4 1024²: 6.6 vs
// 5.9 ms; 1x4->4: 6.2 vs 5.8 ms).
constexpr Index kAdjointForwardChannels = 8;

// With stride 1, backward-data is itself a forward convolution: of
// diff_dst, with the weights' channel roles swapped and their taps
// reversed, and padding d(k-1) - p on each side (y[o] = sum_k w[k]
// x[o - pl + d k] gives dx[i] = sum_k w[K-1-k] y[i - (d(K-1) - pl) + d k]).
// Empty when that padding would be negative or the stride is not 1.
std::optional<ConvDesc> adjoint_forward(const ConvDesc& d) {
  if (d.out_channels / d.groups < kAdjointForwardChannels) return {};
  ConvDesc a = d;
  std::swap(a.in_channels, a.out_channels);
  a.bias = ConvBias::kNone;
  for (int j = 0; j < d.spatial_dims(); ++j) {
    const Index extent = d.dilation[j] * (d.kernel[j] - 1);
    if (d.stride[j] != 1 || d.padding_lower[j] > extent ||
        d.padding_upper[j] > extent) {
      return {};
    }
    a.padding_lower[j] = extent - d.padding_lower[j];
    a.padding_upper[j] = extent - d.padding_upper[j];
  }
  return a;
}

// Plain weights (g, F/g, C/g, taps) of `d` into the adjoint forward's
// (g, C/g, F/g, taps reversed): reversing the row-major tap index reverses
// every spatial axis.
void transpose_and_flip(const ConvDesc& d, const float* w, float* out) {
  const Index g = d.groups, f = d.out_channels / g, c = d.in_channels / g;
  const Index taps = d.kernel.volume();
  for (Index gi = 0; gi < g; ++gi) {
    for (Index fi = 0; fi < f; ++fi) {
      for (Index ci = 0; ci < c; ++ci) {
        const float* from = w + ((gi * f + fi) * c + ci) * taps;
        float* to = out + ((gi * c + ci) * f + fi) * taps;
        for (Index k = 0; k < taps; ++k) to[taps - 1 - k] = from[k];
      }
    }
  }
}

bool is_reference(const std::string& impl) {
  return impl.rfind("ref", 0) == 0;
}

}  // namespace

struct Conv::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream{engine};
  ConvPass pass;
  bool bias;
  dnnl::primitive prim;
  std::string name;
  // Weights in the primitive's layout, and reorders from / to plain.
  memory::desc user_weights_md, prim_weights_md;
  std::optional<dnnl::reorder> weights_in, weights_out;
  std::optional<memory> prim_weights;  // when the layouts differ
  memory::desc src_md, dst_md, bias_md;
  // Backward-weights on blocked copies of the activations (empty: runs
  // on the caller's channels-last arrays).
  Shape src_shape, dst_shape;
  std::vector<float> blocked_src, blocked_diff_dst;
  // Backward-data as the adjoint forward convolution: the description it
  // inverts and the transposed, flipped weights (empty: oneDNN's
  // backward-data primitive).
  ConvDesc desc;
  std::vector<float> adjoint_weights;

  // The weights in the primitive's layout: reordered into the plan's
  // buffer, or the user's array itself when the layouts agree.
  memory weights_for(const float* weights) const {
    memory user(user_weights_md, engine, const_cast<float*>(weights));
    if (!weights_in) return user;
    memory buffer = *prim_weights;  // a handle to the plan's buffer
    weights_in->execute(stream, user, buffer);
    return buffer;
  }
};

Conv::Conv(const ConvDesc& d, const Shape& src_shape, const Shape& dst_shape,
           ConvPass pass)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.pass = pass;
  s.bias = d.bias == ConvBias::kAdd;
  const auto f32 = memory::data_type::f32;
  const Tag act = channels_last(src_shape.ndims());
  const memory::desc src(dims_of(src_shape), f32, act);
  const memory::desc dst(dims_of(dst_shape), f32, act);
  s.src_md = src;
  s.dst_md = dst;
  ConvDesc weights_desc = d;  // whose plain weights the primitive reads
  try {
    const auto fpd = forward_pd(d, src, dst, s.engine);
    if (pass == ConvPass::kForward) {
      s.prim = dnnl::convolution_forward(fpd);
      s.prim_weights_md = fpd.weights_desc();
      s.name = fpd.impl_info_str();
    } else if (pass == ConvPass::kBackwardData) {
      const auto adjoint = adjoint_forward(d);
      std::optional<dnnl::convolution_forward::primitive_desc> apd;
      if (adjoint) apd = forward_pd(*adjoint, dst, src, s.engine);
      if (apd && !is_reference(apd->impl_info_str())) {
        s.prim = dnnl::convolution_forward(*apd);
        s.prim_weights_md = apd->weights_desc();
        s.name = std::string(apd->impl_info_str()) + " as the adjoint forward";
        s.desc = d;
        s.adjoint_weights.resize(d.weights_shape().volume());
        weights_desc = *adjoint;
      } else {
        const auto pd = backward_data_pd(d, src, dst, s.engine, fpd);
        s.prim = dnnl::convolution_backward_data(pd);
        s.prim_weights_md = pd.weights_desc();
        s.name = pd.impl_info_str();
      }
    } else {
      auto pd = backward_weights_pd(d, src, dst, s.engine, fpd);
      if (wants_blocked_backward_weights(d)) {
        // Taken only when oneDNN, free to choose, picks the 16-channel
        // blocks for both activations.
        const Tag tag = blocked16(src_shape.ndims());
        const memory::desc bsrc(src.get_dims(), f32, tag);
        const memory::desc bdst(dst.get_dims(), f32, tag);
        const memory::desc any_src(src.get_dims(), f32, Tag::any);
        const memory::desc any_dst(dst.get_dims(), f32, Tag::any);
        const auto bpd = backward_weights_pd(
            d, any_src, any_dst, s.engine,
            forward_pd(d, any_src, any_dst, s.engine));
        if (bpd.src_desc() == bsrc && bpd.diff_dst_desc() == bdst &&
            !is_reference(bpd.impl_info_str())) {
          pd = bpd;
          s.src_shape = src_shape;
          s.dst_shape = dst_shape;
          s.src_md = bsrc;
          s.dst_md = bdst;
          // Padding channels of the last block stay zero.
          s.blocked_src.assign(block16_size(src_shape), 0.0f);
          s.blocked_diff_dst.assign(block16_size(dst_shape), 0.0f);
        }
      }
      s.prim = dnnl::convolution_backward_weights(pd);
      s.prim_weights_md = pd.diff_weights_desc();
      s.name = pd.impl_info_str();
      if (!s.blocked_src.empty()) s.name += " on blocked copies";
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN cannot plan this convolution: ") +
                    e.what());
  }
  s.bias_md = bias_desc(d);
  s.user_weights_md = plain_weights_desc(weights_desc);
  if (s.prim_weights_md != s.user_weights_md) {
    s.prim_weights.emplace(s.prim_weights_md, s.engine);
    const memory user(s.user_weights_md, s.engine, nullptr);
    if (pass == ConvPass::kBackwardWeights) {
      s.weights_out.emplace(*s.prim_weights, user);
    } else {
      s.weights_in.emplace(user, *s.prim_weights);
    }
  }
}

Conv::~Conv() = default;
Conv::Conv(Conv&&) noexcept = default;
Conv& Conv::operator=(Conv&&) noexcept = default;

std::string Conv::implementation() const { return impl_->name; }

void Conv::forward(const float* src, const float* weights, const float* bias,
                   float* dst) const {
  Impl& s = *impl_;
  require(s.pass == ConvPass::kForward, ErrorKind::kState,
          "kernel not planned for the forward pass");
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(s.src_md, s.engine, const_cast<float*>(src))},
      {DNNL_ARG_WEIGHTS, s.weights_for(weights)},
      {DNNL_ARG_DST, memory(s.dst_md, s.engine, dst)}};
  if (s.bias) {
    args.emplace(DNNL_ARG_BIAS,
                 memory(s.bias_md, s.engine, const_cast<float*>(bias)));
  }
  s.prim.execute(s.stream, args);
  s.stream.wait();
}

void Conv::backward_data(const float* diff_dst, const float* weights,
                         float* diff_src) const {
  Impl& s = *impl_;
  require(s.pass == ConvPass::kBackwardData, ErrorKind::kState,
          "kernel not planned for the backward-data pass");
  if (!s.adjoint_weights.empty()) {
    transpose_and_flip(s.desc, weights, s.adjoint_weights.data());
    s.prim.execute(
        s.stream,
        {{DNNL_ARG_SRC,
          memory(s.dst_md, s.engine, const_cast<float*>(diff_dst))},
         {DNNL_ARG_WEIGHTS, s.weights_for(s.adjoint_weights.data())},
         {DNNL_ARG_DST, memory(s.src_md, s.engine, diff_src)}});
    s.stream.wait();
    return;
  }
  s.prim.execute(
      s.stream,
      {{DNNL_ARG_DIFF_DST,
        memory(s.dst_md, s.engine, const_cast<float*>(diff_dst))},
       {DNNL_ARG_WEIGHTS, s.weights_for(weights)},
       {DNNL_ARG_DIFF_SRC, memory(s.src_md, s.engine, diff_src)}});
  s.stream.wait();
}

void Conv::backward_weights(const float* src, const float* diff_dst,
                            float* diff_weights, float* diff_bias) const {
  Impl& s = *impl_;
  require(s.pass == ConvPass::kBackwardWeights, ErrorKind::kState,
          "kernel not planned for the backward-weights pass");
  memory user(s.user_weights_md, s.engine, diff_weights);
  if (!s.blocked_src.empty()) {
    channels_last_to_block16(s.src_shape, src, s.blocked_src.data());
    channels_last_to_block16(s.dst_shape, diff_dst, s.blocked_diff_dst.data());
    src = s.blocked_src.data();
    diff_dst = s.blocked_diff_dst.data();
  }
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, memory(s.src_md, s.engine, const_cast<float*>(src))},
      {DNNL_ARG_DIFF_DST,
       memory(s.dst_md, s.engine, const_cast<float*>(diff_dst))},
      {DNNL_ARG_DIFF_WEIGHTS, s.weights_out ? *s.prim_weights : user}};
  if (s.bias) {
    args.emplace(DNNL_ARG_DIFF_BIAS, memory(s.bias_md, s.engine, diff_bias));
  }
  s.prim.execute(s.stream, args);
  if (s.weights_out) s.weights_out->execute(s.stream, *s.prim_weights, user);
  s.stream.wait();
}

}  // namespace distconv::onednn
