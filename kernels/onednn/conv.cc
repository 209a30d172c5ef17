#include "kernels/onednn/conv.h"

#include <dnnl.hpp>

#include <optional>
#include <unordered_map>
#include <utility>

#include "distconv/error.h"

namespace distconv::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

memory::dims dims_of(const Shape& s) { return memory::dims(s.begin(), s.end()); }

memory::dims spatial(const Shape& s, Index minus) {
  memory::dims out;
  for (Index v : s) out.push_back(v - minus);
  return out;
}

Tag channels_last(int ndims) { return ndims == 4 ? Tag::nhwc : Tag::ndhwc; }

// Plain weights: (F, C/g, k...), or (g, F/g, C/g, k...) with groups.
memory::desc plain_weights(const ConvDesc& d) {
  const bool grouped = d.groups > 1;
  memory::dims dims;
  if (grouped) dims.push_back(d.groups);
  dims.push_back(d.out_channels / d.groups);
  dims.push_back(d.in_channels / d.groups);
  for (Index k : d.kernel) dims.push_back(k);
  Tag tag;
  if (d.spatial_dims() == 2) {
    tag = grouped ? Tag::goihw : Tag::oihw;
  } else {
    tag = grouped ? Tag::goidhw : Tag::oidhw;
  }
  return memory::desc(dims, memory::data_type::f32, tag);
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
  mutable std::optional<memory> prim_weights;  // when the layouts differ
  memory::desc src_md, dst_md, bias_md;

  // The weights in the primitive's layout: reordered into the plan's
  // buffer, or the user's array itself when the layouts agree.
  memory weights_for(const float* weights) const {
    memory user(user_weights_md, engine, const_cast<float*>(weights));
    if (!weights_in) return user;
    weights_in->execute(stream, user, *prim_weights);
    return *prim_weights;
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
  const memory::desc weights_any(plain_weights(d).dims(), f32, Tag::any);
  const memory::desc bias_md({d.out_channels}, f32, Tag::x);
  const memory::dims strides = dims_of(d.stride);
  const memory::dims dilation = spatial(d.dilation, 1);  // oneDNN: 0 = dense
  const memory::dims pl = dims_of(d.padding_lower);
  const memory::dims pr = dims_of(d.padding_upper);
  const auto alg = dnnl::algorithm::convolution_direct;
  try {
    using Fwd = dnnl::convolution_forward;
    const Fwd::desc fd =
        s.bias ? Fwd::desc(dnnl::prop_kind::forward_training, alg, src,
                           weights_any, bias_md, dst, strides, dilation, pl, pr)
               : Fwd::desc(dnnl::prop_kind::forward_training, alg, src,
                           weights_any, dst, strides, dilation, pl, pr);
    const Fwd::primitive_desc fpd(fd, s.engine);
    if (pass == ConvPass::kForward) {
      s.prim = Fwd(fpd);
      s.prim_weights_md = fpd.weights_desc();
      s.name = fpd.impl_info_str();
    } else if (pass == ConvPass::kBackwardData) {
      using Bwd = dnnl::convolution_backward_data;
      const Bwd::primitive_desc pd(
          Bwd::desc(alg, src, weights_any, dst, strides, dilation, pl, pr),
          s.engine, fpd);
      s.prim = Bwd(pd);
      s.prim_weights_md = pd.weights_desc();
      s.name = pd.impl_info_str();
    } else {
      using Bww = dnnl::convolution_backward_weights;
      const Bww::desc bd =
          s.bias ? Bww::desc(alg, src, weights_any, bias_md, dst, strides,
                             dilation, pl, pr)
                 : Bww::desc(alg, src, weights_any, dst, strides, dilation,
                             pl, pr);
      const Bww::primitive_desc pd(bd, s.engine, fpd);
      s.prim = Bww(pd);
      s.prim_weights_md = pd.diff_weights_desc();
      s.name = pd.impl_info_str();
    }
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported,
                std::string("oneDNN cannot plan this convolution: ") +
                    e.what());
  }
  s.src_md = src;
  s.dst_md = dst;
  s.bias_md = bias_md;
  s.user_weights_md = plain_weights(d);
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
