#include <algorithm>
#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/reference/deconv.h"
#include "perf/case_bench.h"
#include "perf/layer_bench.h"
#include "perf/layer_cases.h"
#include "perf/onednn_deconv_baseline.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  DeconvDesc desc = deconv_desc(problem);
  desc.bias = ConvBias::kAdd;
  const Shape src_shape = deconv_src_shape(problem);
  const Shape dst_shape = problem.src_shape;
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_for(o, src_shape, world_ranks(), problem));
  LayerCase<T, HostSpace> c =
      make_deconv_case<T, HostSpace>(o, problem, grid, Exec<HostSpace>());
  // The reference in P (fp32 for bf16) on the same inputs; y and dx are
  // rounded to T. Only what the passes wrote (y always: see
  // case_result_written).
  using P = Compute<T>;
  auto reference = [&](BenchDir dir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>& params) {
    const std::vector<P>&x = in[0], &dy = in[1], &w = params[0],
          &b = params[1];
    std::vector<P> y(dst_shape.volume()), dx, dw, db;
    reference::deconv_fwd(desc, src_shape, x.data(), w.data(), b.data(),
                          dst_shape, y.data());
    if (runs_pass(dir, BenchDir::kBackwardData)) {
      dx.resize(src_shape.volume());
      reference::deconv_bwd_data(desc, dst_shape, dy.data(), w.data(),
                                 src_shape, dx.data());
    }
    if (runs_pass(dir, BenchDir::kBackwardWeights)) {
      dw.resize(w.size());
      db.resize(b.size());
      reference::deconv_bwd_weights(desc, src_shape, x.data(), dst_shape,
                                    dy.data(), dw.data(), db.data());
    }
    return std::vector<std::vector<P>>{y, dx, dw, db};
  };
  return run_host_case(o, grid, c, conv_flops(problem, o.dir),
                       conv_tolerance<P>(problem), reference);
}

// oneDNN's deconvolution primitives on the whole problem.
BenchResult run_onednn(const BenchOptions& o, const ConvProblem& problem) {
  OnednnDeconvBaseline base(deconv_desc(problem), deconv_src_shape(problem));
  if (o.verbose) std::printf("oneDNN: %s\n", base.implementation().c_str());
  BenchResult r;
  time_runs(
      o,
      [&] {
        base.run(o.dir);
        return 0.0;
      },
      &r);
  r.gflops = conv_flops(problem, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

BenchResult run_deconv_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
