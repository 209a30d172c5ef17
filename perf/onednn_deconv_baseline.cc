#include "perf/onednn_deconv_baseline.h"

#include <dnnl.hpp>

#include "kernels/onednn/conv_descs.h"
#include "perf/onednn_passes.h"

namespace distconv {
namespace {

using dnnl::memory;

memory::dims spatial(const Shape& s, Index minus) {
  memory::dims out;
  for (Index v : s) out.push_back(v - minus);
  return out;
}

}  // namespace

struct OnednnDeconvBaseline::Impl
    : OnednnPasses<dnnl::deconvolution_forward,
                   dnnl::deconvolution_backward_data,
                   dnnl::deconvolution_backward_weights> {};

OnednnDeconvBaseline::OnednnDeconvBaseline(const DeconvDesc& d,
                                           const Shape& src_shape)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const auto any = memory::format_tag::any;
  const auto f32 = memory::data_type::f32;
  const Shape dst_shape = d.dst_shape(src_shape);
  const memory::desc src(onednn::dims_of(src_shape), f32, any);
  const memory::desc dst(onednn::dims_of(dst_shape), f32, any);
  // oneDNN's deconvolution weights: (g,) out / g, in / g, k...
  memory::dims wdims;
  if (d.groups > 1) wdims.push_back(d.groups);
  wdims.push_back(d.out_channels / d.groups);
  wdims.push_back(d.in_channels / d.groups);
  for (Index k : d.kernel) wdims.push_back(k);
  const memory::desc weights(wdims, f32, any);
  const memory::desc bias({d.out_channels}, f32, memory::format_tag::x);
  const auto strides = spatial(d.stride, 0);
  const auto dilates = spatial(d.dilation, 1);
  const auto pl = spatial(d.padding_lower, 0);
  // oneDNN derives the output from the upper padding: output padding is
  // less padding after.
  memory::dims pr;
  for (int j = 0; j < d.spatial_dims(); ++j) {
    pr.push_back(d.padding_upper[j] - d.output_padding[j]);
  }
  const auto alg = dnnl::algorithm::deconvolution_direct;
  const dnnl::deconvolution_forward::primitive_desc fpd(
      s.engine, dnnl::prop_kind::forward_training, alg, src, weights, bias,
      dst, strides, dilates, pl, pr);
  const dnnl::deconvolution_backward_data::primitive_desc dpd(
      s.engine, alg, src, weights, dst, strides, dilates, pl, pr, fpd);
  const dnnl::deconvolution_backward_weights::primitive_desc wpd(
      s.engine, alg, src, weights, bias, dst, strides, dilates, pl, pr, fpd);
  s.plan(fpd, dpd, wpd);
}

OnednnDeconvBaseline::~OnednnDeconvBaseline() = default;

std::string OnednnDeconvBaseline::implementation() const {
  return impl_->names;
}

void OnednnDeconvBaseline::run(BenchDir dir) { impl_->run(dir); }

}  // namespace distconv
