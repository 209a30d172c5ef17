#include "perf/onednn_baseline.h"

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

}  // namespace

struct OnednnBaseline::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwd_d;
  dnnl::convolution_backward_weights bwd_w;
  std::unordered_map<int, memory> fwd_args, bwd_d_args, bwd_w_args;
  std::string names;
};

OnednnBaseline::OnednnBaseline(const ConvDesc& d, const Shape& src_shape)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const auto any = memory::format_tag::any;
  ConvDesc desc = d;
  desc.bias = ConvBias::kAdd;
  const memory::desc src(onednn::dims_of(src_shape), memory::data_type::f32,
                         any);
  const memory::desc dst(onednn::dims_of(d.dst_shape(src_shape)),
                         memory::data_type::f32, any);
  const auto fpd = onednn::forward_pd(desc, src, dst, s.engine);
  const auto dpd = onednn::backward_data_pd(desc, src, dst, s.engine, fpd);
  const auto wpd = onednn::backward_weights_pd(desc, src, dst, s.engine, fpd);
  s.fwd = dnnl::convolution_forward(fpd);
  s.bwd_d = dnnl::convolution_backward_data(dpd);
  s.bwd_w = dnnl::convolution_backward_weights(wpd);
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

OnednnBaseline::~OnednnBaseline() = default;

std::string OnednnBaseline::implementation() const { return impl_->names; }

void OnednnBaseline::run(BenchDir dir) {
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
