#include "perf/onednn_baseline.h"

#include <dnnl.hpp>

#include <unordered_map>
#include <vector>

namespace distconv {
namespace {

using dnnl::memory;

memory::dims dims_of(const Shape& s) { return memory::dims(s.begin(), s.end()); }

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
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  const Shape dst_shape = d.dst_shape(src_shape);
  memory::dims wdims;
  if (d.groups > 1) wdims.push_back(d.groups);
  wdims.push_back(d.out_channels / d.groups);
  wdims.push_back(d.in_channels / d.groups);
  for (Index k : d.kernel) wdims.push_back(k);
  const memory::desc src(dims_of(src_shape), f32, any);
  const memory::desc dst(dims_of(dst_shape), f32, any);
  const memory::desc w(wdims, f32, any);
  const memory::desc b({d.out_channels}, f32, memory::format_tag::x);
  memory::dims dil;
  for (Index x : d.dilation) dil.push_back(x - 1);
  const auto st = dims_of(d.stride), pl = dims_of(d.padding_lower),
             pr = dims_of(d.padding_upper);
  const auto alg = dnnl::algorithm::convolution_direct;
  using Fwd = dnnl::convolution_forward;
  using BwdD = dnnl::convolution_backward_data;
  using BwdW = dnnl::convolution_backward_weights;
  const Fwd::primitive_desc fpd(
      Fwd::desc(dnnl::prop_kind::forward_training, alg, src, w, b, dst, st,
                dil, pl, pr),
      s.engine);
  const BwdD::primitive_desc dpd(BwdD::desc(alg, src, w, dst, st, dil, pl, pr),
                                 s.engine, fpd);
  const BwdW::primitive_desc wpd(
      BwdW::desc(alg, src, w, b, dst, st, dil, pl, pr), s.engine, fpd);
  s.fwd = Fwd(fpd);
  s.bwd_d = BwdD(dpd);
  s.bwd_w = BwdW(wpd);
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
