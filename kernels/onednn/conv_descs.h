// oneDNN's descriptions of one convolution, shared by the kernels
// (kernels/onednn/conv.h) and the benchmark's bare-oneDNN baseline: the
// primitive descriptors of the three passes for given src / dst memory
// descriptors (fixed layouts or format `any`), weights in format `any`,
// bias (F) when desc.bias == ConvBias::kAdd. The weights are of src's data
// type (fp32, or bf16 for bf16 activations); weight and bias gradients and
// the bias are fp32; and a dense layer's as an inner product. Throw
// dnnl::error when oneDNN has no implementation.
//
//   const auto fwd = forward_pd(desc, src_md, dst_md, engine);
//   const auto bwd = backward_data_pd(desc, src_md, dst_md, engine, fwd);
#ifndef DISTCONV_KERNELS_ONEDNN_CONV_DESCS_H_
#define DISTCONV_KERNELS_ONEDNN_CONV_DESCS_H_

#include <dnnl.hpp>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"

namespace distconv::onednn {

dnnl::memory::dims dims_of(const Shape& s);
// Plain weights (F, C/g, k...), as oneDNN's (g, F/g, C/g, k...) with groups.
dnnl::memory::desc plain_weights_desc(const ConvDesc& desc);
dnnl::memory::desc bias_desc(const ConvDesc& desc);

dnnl::convolution_forward::primitive_desc forward_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine);
dnnl::convolution_backward_data::primitive_desc backward_data_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine,
    const dnnl::convolution_forward::primitive_desc& hint);
dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine,
    const dnnl::convolution_forward::primitive_desc& hint);

// A dense layer's convolution (covers_input(), kernels/conv_impl.h) as
// oneDNN's inner product: src (or diff_src) plain (n, C, spatial...) fp32,
// dst (n, F), the weights in their plain layout (no reorder).
dnnl::inner_product_forward::primitive_desc inner_product_forward_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine);
dnnl::inner_product_backward_data::primitive_desc
inner_product_backward_data_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine,
    const dnnl::inner_product_forward::primitive_desc& hint);
dnnl::inner_product_backward_weights::primitive_desc
inner_product_backward_weights_pd(
    const ConvDesc& desc, const dnnl::memory::desc& src,
    const dnnl::memory::desc& dst, const dnnl::engine& engine,
    const dnnl::inner_product_forward::primitive_desc& hint);

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_CONV_DESCS_H_
