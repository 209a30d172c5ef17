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
  const auto w = random_vector<T>(desc.weights_shape().volume(), 2);
  const auto b = random_vector<T>(desc.out_channels, 3);
  std::vector<T> dw(w.size()), db(b.size());
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
  std::vector<T> y_ref(yg.size()), dx_ref(dxg.size()), dw_ref(w.size()),
      db_ref(b.size());
  double err = 0;
  if (fwd) {
    reference::deconv_fwd(desc, src_shape, xg.data(), w.data(), b.data(),
                          dst_shape, y_ref.data());
    err = std::max(err, max_relative_error(yg, y_ref));
  }
  if (bwd_d) {
    reference::deconv_bwd_data(desc, dst_shape, dyg.data(), w.data(), src_shape,
                               dx_ref.data());
    err = std::max(err, max_relative_error(dxg, dx_ref));
  }
  if (bwd_w) {
    reference::deconv_bwd_weights(desc, src_shape, xg.data(), dst_shape,
                                  dyg.data(), dw_ref.data(), db_ref.data());
    err = std::max(err, max_relative_error(dw, dw_ref));
    err = std::max(err, max_relative_error(db, db_ref));
  }
  r.max_rel_err = err;
  r.status = err <= conv_tolerance<T>(problem) ? "PASS" : "FAIL";
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
  return o.dt == BenchDataType::kF32 ? run_distconv<float>(o, p)
                                     : run_distconv<double>(o, p);
}

}  // namespace distconv
