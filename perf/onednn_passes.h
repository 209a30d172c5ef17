// The three passes of a oneDNN layer with weights (forward with bias,
// backward-data, backward-weights with bias) as the baselines run them:
// primitives created once from their primitive descriptors, every argument
// in memory of the layout oneDNN chose, filled with small values. Shared by
// the convolution and transposed-convolution baselines.
//
//   OnednnPasses<dnnl::convolution_forward, dnnl::convolution_backward_data,
//                dnnl::convolution_backward_weights> passes;
//   passes.plan(fwd_pd, bwd_d_pd, bwd_w_pd);   // pds on passes.engine
//   passes.run(BenchDir::kAll);
#ifndef DISTCONV_PERF_ONEDNN_PASSES_H_
#define DISTCONV_PERF_ONEDNN_PASSES_H_

#include <dnnl.hpp>

#include <string>
#include <unordered_map>

#include "perf/bench_options.h"

namespace distconv {

template <typename Forward, typename BackwardData, typename BackwardWeights>
struct OnednnPasses {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  Forward fwd;
  BackwardData bwd_d;
  BackwardWeights bwd_w;
  std::unordered_map<int, dnnl::memory> fwd_args, bwd_d_args, bwd_w_args;
  std::string names;  // "fwd | bwd_d | bwd_w" implementations

  template <typename FwdPd, typename DataPd, typename WeightsPd>
  void plan(const FwdPd& f, const DataPd& d, const WeightsPd& w) {
    fwd = Forward(f);
    bwd_d = BackwardData(d);
    bwd_w = BackwardWeights(w);
    fwd_args = {{DNNL_ARG_SRC, filled(f.src_desc())},
                {DNNL_ARG_WEIGHTS, filled(f.weights_desc())},
                {DNNL_ARG_BIAS, filled(f.bias_desc())},
                {DNNL_ARG_DST, filled(f.dst_desc())}};
    bwd_d_args = {{DNNL_ARG_DIFF_DST, filled(d.diff_dst_desc())},
                  {DNNL_ARG_WEIGHTS, filled(d.weights_desc())},
                  {DNNL_ARG_DIFF_SRC, filled(d.diff_src_desc())}};
    bwd_w_args = {{DNNL_ARG_SRC, filled(w.src_desc())},
                  {DNNL_ARG_DIFF_DST, filled(w.diff_dst_desc())},
                  {DNNL_ARG_DIFF_WEIGHTS, filled(w.diff_weights_desc())},
                  {DNNL_ARG_DIFF_BIAS, filled(w.diff_bias_desc())}};
    names = std::string(f.impl_info_str()) + " | " + d.impl_info_str() +
            " | " + w.impl_info_str();
  }

  void run(BenchDir dir) {
    if (dir == BenchDir::kForward || dir == BenchDir::kAll) {
      fwd.execute(stream, fwd_args);
    }
    if (dir == BenchDir::kBackwardWeights || dir == BenchDir::kAll) {
      bwd_w.execute(stream, bwd_w_args);
    }
    if (dir == BenchDir::kBackwardData || dir == BenchDir::kAll) {
      bwd_d.execute(stream, bwd_d_args);
    }
    stream.wait();
  }

  // Memory for `md`, filled with small values.
  dnnl::memory filled(const dnnl::memory::desc& md) const {
    dnnl::memory m(md, engine);
    float* p = static_cast<float*>(m.get_data_handle());
    const size_t n = md.get_size() / sizeof(float);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 7) * 0.1f;
    return m;
  }
};

}  // namespace distconv

#endif  // DISTCONV_PERF_ONEDNN_PASSES_H_
