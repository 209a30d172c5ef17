#include "perf/onednn_deconv_baseline.h"

#include <dnnl.hpp>

#include <unordered_map>

#include "kernels/onednn/conv_descs.h"

namespace distconv {
namespace {

using dnnl::memory;

// Memory for `md`, filled with small values.
memory filled(const memory::desc& md, const dnnl::engine& engine) {
  memory m(md, engine);
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t n = md.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 7) * 0.1f;
  return m;
}

memory::dims spatial(const Shape& s, Index minus) {
  memory::dims out;
  for (Index v : s) out.push_back(v - minus);
  return out;
}

}  // namespace

struct OnednnDeconvBaseline::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::deconvolution_forward fwd;
  dnnl::deconvolution_backward_data bwd_d;
  dnnl::deconvolution_backward_weights bwd_w;
  std::unordered_map<int, memory> fwd_args, bwd_d_args, bwd_w_args;
  std::string names;
};

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
      {dnnl::prop_kind::forward_training, alg, src, weights, bias, dst,
       strides, dilates, pl, pr},
      s.engine);
  const dnnl::deconvolution_backward_data::primitive_desc dpd(
      {alg, src, weights, dst, strides, dilates, pl, pr}, s.engine, fpd);
  const dnnl::deconvolution_backward_weights::primitive_desc wpd(
      {alg, src, weights, bias, dst, strides, dilates, pl, pr}, s.engine,
      fpd);
  s.fwd = dnnl::deconvolution_forward(fpd);
  s.bwd_d = dnnl::deconvolution_backward_data(dpd);
  s.bwd_w = dnnl::deconvolution_backward_weights(wpd);
  s.fwd_args = {{DNNL_ARG_SRC, filled(fpd.src_desc(), s.engine)},
                {DNNL_ARG_WEIGHTS, filled(fpd.weights_desc(), s.engine)},
                {DNNL_ARG_BIAS, filled(fpd.bias_desc(), s.engine)},
                {DNNL_ARG_DST, filled(fpd.dst_desc(), s.engine)}};
  s.bwd_d_args = {{DNNL_ARG_DIFF_DST, filled(dpd.diff_dst_desc(), s.engine)},
                  {DNNL_ARG_WEIGHTS, filled(dpd.weights_desc(), s.engine)},
                  {DNNL_ARG_DIFF_SRC, filled(dpd.diff_src_desc(), s.engine)}};
  s.bwd_w_args = {
      {DNNL_ARG_SRC, filled(wpd.src_desc(), s.engine)},
      {DNNL_ARG_DIFF_DST, filled(wpd.diff_dst_desc(), s.engine)},
      {DNNL_ARG_DIFF_WEIGHTS, filled(wpd.diff_weights_desc(), s.engine)},
      {DNNL_ARG_DIFF_BIAS, filled(wpd.diff_bias_desc(), s.engine)}};
  s.names = std::string(fpd.impl_info_str()) + " | " + dpd.impl_info_str() +
            " | " + wpd.impl_info_str();
}

OnednnDeconvBaseline::~OnednnDeconvBaseline() = default;

std::string OnednnDeconvBaseline::implementation() const {
  return impl_->names;
}

void OnednnDeconvBaseline::run(BenchDir dir) {
  Impl& s = *impl_;
  if (dir == BenchDir::kForward || dir == BenchDir::kAll) {
    s.fwd.execute(s.stream, s.fwd_args);
  }
  if (dir == BenchDir::kBackwardWeights || dir == BenchDir::kAll) {
    s.bwd_w.execute(s.stream, s.bwd_w_args);
  }
  if (dir == BenchDir::kBackwardData || dir == BenchDir::kAll) {
    s.bwd_d.execute(s.stream, s.bwd_d_args);
  }
  s.stream.wait();
}

}  // namespace distconv
