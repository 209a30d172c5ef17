#include "perf/onednn_baseline.h"

#include <dnnl.hpp>

#include "kernels/onednn/conv_descs.h"
#include "perf/onednn_passes.h"

namespace distconv {

struct OnednnBaseline::Impl
    : OnednnPasses<dnnl::convolution_forward, dnnl::convolution_backward_data,
                   dnnl::convolution_backward_weights> {};

OnednnBaseline::OnednnBaseline(const ConvDesc& d, const Shape& src_shape)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const auto any = dnnl::memory::format_tag::any;
  ConvDesc desc = d;
  desc.bias = ConvBias::kAdd;
  const dnnl::memory::desc src(onednn::dims_of(src_shape),
                               dnnl::memory::data_type::f32, any);
  const dnnl::memory::desc dst(onednn::dims_of(d.dst_shape(src_shape)),
                               dnnl::memory::data_type::f32, any);
  const auto fpd = onednn::forward_pd(desc, src, dst, s.engine);
  s.plan(fpd, onednn::backward_data_pd(desc, src, dst, s.engine, fpd),
         onednn::backward_weights_pd(desc, src, dst, s.engine, fpd));
}

OnednnBaseline::~OnednnBaseline() = default;

std::string OnednnBaseline::implementation() const { return impl_->names; }

void OnednnBaseline::run(BenchDir dir) { impl_->run(dir); }

}  // namespace distconv
