#include "kernels/onednn/conv_descs.h"

namespace distconv::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr auto kAlgorithm = dnnl::algorithm::convolution_direct;

// Strides, dilation (oneDNN counts 0 as dense), padding.
struct Steps {
  memory::dims strides, dilation, padding_l, padding_r;
};

Steps steps_of(const ConvDesc& d) {
  Steps s{dims_of(d.stride), {}, dims_of(d.padding_lower),
          dims_of(d.padding_upper)};
  for (Index x : d.dilation) s.dilation.push_back(x - 1);
  return s;
}

memory::desc weights_any(const ConvDesc& d, memory::data_type type) {
  return memory::desc(plain_weights_desc(d).get_dims(), type, Tag::any);
}

bool has_bias(const ConvDesc& d) { return d.bias == ConvBias::kAdd; }

}  // namespace

memory::dims dims_of(const Shape& s) { return memory::dims(s.begin(), s.end()); }

memory::desc plain_weights_desc(const ConvDesc& d) {
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
  return memory::desc(dims, kF32, tag);
}

memory::desc bias_desc(const ConvDesc& d) {
  return memory::desc({d.out_channels}, kF32, Tag::x);
}

dnnl::convolution_forward::primitive_desc forward_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine) {
  using Fwd = dnnl::convolution_forward;
  const Steps s = steps_of(d);
  const memory::desc weights = weights_any(d, src.get_data_type());
  const auto prop = dnnl::prop_kind::forward_training;
  if (has_bias(d)) {
    return Fwd::primitive_desc(engine, prop, kAlgorithm, src, weights,
                               bias_desc(d), dst, s.strides, s.dilation,
                               s.padding_l, s.padding_r);
  }
  return Fwd::primitive_desc(engine, prop, kAlgorithm, src, weights, dst,
                             s.strides, s.dilation, s.padding_l, s.padding_r);
}

dnnl::convolution_backward_data::primitive_desc backward_data_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine,
    const dnnl::convolution_forward::primitive_desc& hint) {
  using Bwd = dnnl::convolution_backward_data;
  const Steps s = steps_of(d);
  return Bwd::primitive_desc(engine, kAlgorithm, src,
                             weights_any(d, src.get_data_type()), dst,
                             s.strides, s.dilation, s.padding_l, s.padding_r,
                             hint);
}

dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine,
    const dnnl::convolution_forward::primitive_desc& hint) {
  using Bww = dnnl::convolution_backward_weights;
  const Steps s = steps_of(d);
  if (has_bias(d)) {
    return Bww::primitive_desc(engine, kAlgorithm, src, weights_any(d, kF32),
                               bias_desc(d), dst, s.strides, s.dilation,
                               s.padding_l, s.padding_r, hint);
  }
  return Bww::primitive_desc(engine, kAlgorithm, src, weights_any(d, kF32),
                             dst, s.strides, s.dilation, s.padding_l,
                             s.padding_r, hint);
}

dnnl::inner_product_forward::primitive_desc inner_product_forward_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine) {
  using Fwd = dnnl::inner_product_forward;
  const auto prop = dnnl::prop_kind::forward_training;
  if (has_bias(d)) {
    return Fwd::primitive_desc(engine, prop, src, plain_weights_desc(d),
                               bias_desc(d), dst);
  }
  return Fwd::primitive_desc(engine, prop, src, plain_weights_desc(d), dst);
}

dnnl::inner_product_backward_data::primitive_desc
inner_product_backward_data_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine,
    const dnnl::inner_product_forward::primitive_desc& hint) {
  return dnnl::inner_product_backward_data::primitive_desc(
      engine, src, plain_weights_desc(d), dst, hint);
}

dnnl::inner_product_backward_weights::primitive_desc
inner_product_backward_weights_pd(
    const ConvDesc& d, const memory::desc& src, const memory::desc& dst,
    const dnnl::engine& engine,
    const dnnl::inner_product_forward::primitive_desc& hint) {
  using Bww = dnnl::inner_product_backward_weights;
  if (has_bias(d)) {
    return Bww::primitive_desc(engine, src, plain_weights_desc(d), bias_desc(d),
                               dst, hint);
  }
  return Bww::primitive_desc(engine, src, plain_weights_desc(d), dst, hint);
}

}  // namespace distconv::onednn
