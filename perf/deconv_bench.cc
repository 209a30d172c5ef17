#include <algorithm>
#include <vector>

#include "layers/deconvolution.h"
#include "distconv/dist_tensor.h"
#include "kernels/reference/deconv.h"
#include "tests/conv_check.h"
#include "perf/layer_bench.h"
#include "perf/tensor_dump.h"
#include "perf/onednn_deconv_baseline.h"

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
  Deconvolution<T> layer(grid, desc, Distribution(src_shape, grid.shape()));
  DistTensor<T> x(grid, layer.src_layout()), y(grid, layer.dst_layout());
  DistTensor<T> dy(grid, layer.diff_dst_layout());
  DistTensor<T> dx(grid, layer.diff_src_layout());
  using P = Compute<T>;  // weights, bias, gradients (fp32 for bf16)
  const auto w = random_vector<P>(desc.weights_shape().volume(), 2);
  const auto b = random_vector<P>(desc.out_channels, 3);
  std::vector<P> dw(w.size()), db(b.size());
  print_plan(o, grid.rank(), layer.describe());
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd_d = runs_pass(o.dir, BenchDir::kBackwardData);
  const bool bwd_w = runs_pass(o.dir, BenchDir::kBackwardWeights);
  auto run = [&] {
    layer.reset_stats();
    if (fwd) layer.forward(x, w.data(), b.data(), y);
    if (bwd_w) layer.backward_weights(x, dy, dw.data(), db.data());
    if (bwd_d) layer.backward_data(dy, w.data(), dx);
    if (bwd_w) layer.wait_gradients();
    return layer.stats().halo_wait_s + layer.stats().allreduce_wait_s;
  };
  BenchResult r;
  const std::vector<T> xg = scatter_random(o, x, 1);
  const std::vector<T> dyg = scatter_random(o, dy, 4);
  time_for_mode(o, run, &r);
  r.gflops = conv_flops(problem, o.dir) / (r.median_ms * 1e-3) / 1e9;
  if (o.mode == BenchMode::kPerf) return r;
  dump_conv_tensors(grid.comm(), o, x, dy, y, dx, desc.weights_shape(),
                    desc.out_channels, w.data(), b.data(), dw.data(),
                    db.data());
  const std::vector<T> yg = gathered(y), dxg = gathered(dx);
  if (grid.rank() != 0) return r;
  // The reference in P on the same inputs; y and dx are rounded to T.
  const std::vector<P> xp = widened(xg), dyp = widened(dyg);
  std::vector<P> y_ref(yg.size()), dx_ref(dxg.size()), dw_ref(w.size()),
      db_ref(b.size());
  double out_err = 0, grad_err = 0;
  if (fwd) {
    reference::deconv_fwd(desc, src_shape, xp.data(), w.data(), b.data(),
                          dst_shape, y_ref.data());
    out_err = std::max(out_err, max_relative_error(widened(yg), y_ref));
  }
  if (bwd_d) {
    reference::deconv_bwd_data(desc, dst_shape, dyp.data(), w.data(),
                               src_shape, dx_ref.data());
    out_err = std::max(out_err, max_relative_error(widened(dxg), dx_ref));
  }
  if (bwd_w) {
    reference::deconv_bwd_weights(desc, src_shape, xp.data(), dst_shape,
                                  dyp.data(), dw_ref.data(), db_ref.data());
    grad_err = std::max(grad_err, max_relative_error(dw, dw_ref));
    grad_err = std::max(grad_err, max_relative_error(db, db_ref));
  }
  const double tol = conv_tolerance<P>(problem);
  r.max_rel_err = std::max(out_err, grad_err);
  r.status = out_err <= rounded_tolerance<T>(tol) && grad_err <= tol
                 ? "PASS"
                 : "FAIL";
  return r;
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
