#include "perf/onednn_baseline.h"

#include <dnnl.hpp>

#include <optional>
#include <string>

#include "distconv/error.h"
#include "kernels/onednn/conv_descs.h"
#include "perf/onednn_passes.h"

namespace distconv {

namespace {

std::string lacks(BenchDataType dt, std::optional<dnnl::error> e) {
  return "oneDNN " + std::to_string(dnnl_version()->major) + "." +
         std::to_string(dnnl_version()->minor) + " has no " + to_string(dt) +
         " convolution for this CPU" +
         (e ? std::string(" (") + e->what() + ")" : std::string());
}

}  // namespace

struct OnednnBaseline::Impl
    : OnednnPasses<dnnl::convolution_forward, dnnl::convolution_backward_data,
                   dnnl::convolution_backward_weights> {};

OnednnBaseline::OnednnBaseline(const ConvDesc& d, const Shape& src_shape,
                               BenchDataType dt)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  using Type = dnnl::memory::data_type;
  require(dt != BenchDataType::kF64, ErrorKind::kUnsupported,
          "oneDNN has no fp64 convolution");
  const Type type = dt == BenchDataType::kBf16  ? Type::bf16
                    : dt == BenchDataType::kF16 ? Type::f16
                                                : Type::f32;
  const auto any = dnnl::memory::format_tag::any;
  ConvDesc desc = d;
  desc.bias = ConvBias::kAdd;
  const dnnl::memory::desc src(onednn::dims_of(src_shape), type, any);
  const dnnl::memory::desc dst(onednn::dims_of(d.dst_shape(src_shape)), type,
                               any);
  try {
    const auto fpd = onednn::forward_pd(desc, src, dst, s.engine);
    s.plan(fpd, onednn::backward_data_pd(desc, src, dst, s.engine, fpd),
           onednn::backward_weights_pd(desc, src, dst, s.engine, fpd));
  } catch (const dnnl::error& e) {
    throw Error(ErrorKind::kUnsupported, lacks(dt, e));
  }
}

std::string onednn_lacks(const ConvDesc& desc, const Shape& src_shape,
                         BenchDataType dt) {
  try {
    OnednnBaseline probe(desc, src_shape, dt);
  } catch (const Error&) {
    return lacks(dt, std::nullopt);
  }
  return "";
}

OnednnBaseline::~OnednnBaseline() = default;

std::string OnednnBaseline::implementation() const { return impl_->names; }

void OnednnBaseline::run(BenchDir dir) { impl_->run(dir); }

}  // namespace distconv
