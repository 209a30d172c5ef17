#include <algorithm>
#include <dnnl.hpp>
#include <vector>

#include "layers/batch_norm.h"
#include "distconv/dist_tensor.h"
#include "kernels/reference/batch_norm.h"
#include "tests/conv_check.h"
#include "perf/layer_bench.h"
#include "perf/tensor_dump.h"
#include "perf/onednn_memory.h"

namespace distconv {
namespace {

constexpr double kEpsilon = 1e-5;

// Floating-point operations, counted per element: forward 7 (the sum, the
// squared deviation, then subtract, scale, shift), backward 9 (the two
// sums, then the five terms of dx).
double flops(const Shape& shape, BenchDir dir) {
  const double n = static_cast<double>(shape.volume());
  return (runs_pass(dir, BenchDir::kForward) ? 7 * n : 0) +
         (runs_pass(dir, BenchDir::kBackwardData) ? 9 * n : 0);
}

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  const Shape shape = problem.src_shape;
  const Index c = shape[1];
  ProcessGrid grid(MPI_COMM_WORLD, grid_for(o, shape, world_ranks(), problem));
  BatchNormOptions options;
  options.epsilon = kEpsilon;
  BatchNorm<T> bn(grid, Distribution(shape, grid.shape()), options);
  print_plan(o, grid.rank(), bn.describe());
  DistTensor<T> x(grid, bn.src_layout()), y(grid, bn.dst_layout());
  DistTensor<T> dy(grid, bn.diff_dst_layout());
  DistTensor<T> dx(grid, bn.diff_src_layout());
  using P = Compute<T>;  // scale, shift, their gradients (fp32 for bf16)
  const auto scale = random_vector<P>(c, 2), shift = random_vector<P>(c, 3);
  std::vector<P> dscale(c), dshift(c);
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  const std::vector<T> xg = scatter_random(o, x, 1);
  const std::vector<T> dyg = scatter_random(o, dy, 4);
  // The layer does not report its allreduces' waits: comm_wait_ms is 0.
  auto run = [&] {
    if (fwd) bn.forward(x, scale.data(), shift.data(), y);
    if (bwd) bn.backward(x, dy, scale.data(), dx, dscale.data(), dshift.data());
    return 0.0;
  };
  if (!fwd) bn.forward(x, scale.data(), shift.data(), y);  // backward's stats
  BenchResult r;
  time_for_mode(o, run, &r);
  r.gflops = flops(shape, o.dir) / (r.median_ms * 1e-3) / 1e9;
  if (o.mode == BenchMode::kPerf) return r;
  TensorDump dump(grid.comm(), o);
  dump.add("x", x);
  dump.add("scale", Shape{c}, scale.data());
  dump.add("shift", Shape{c}, shift.data());
  dump.add("dy", dy);
  dump.add("y", y);
  dump.add("dx", dx);
  dump.add("dscale", Shape{c}, dscale.data());
  dump.add("dshift", Shape{c}, dshift.data());
  dump.close();
  const std::vector<T> yg = gathered(y), dxg = gathered(dx);
  if (grid.rank() != 0) return r;
  // The reference in P on the same inputs; y and dx are rounded to T.
  const std::vector<P> xp = widened(xg), dyp = widened(dyg);
  std::vector<P> y_ref(yg.size()), dx_ref(dxg.size()), ds_ref(c), db_ref(c);
  reference::batch_norm_fwd_training(shape, xp.data(), scale.data(),
                                     shift.data(), kEpsilon, y_ref.data());
  reference::batch_norm_bwd_training(shape, xp.data(), dyp.data(),
                                     scale.data(), kEpsilon, dx_ref.data(),
                                     ds_ref.data(), db_ref.data());
  double out_err = max_relative_error(widened(yg), y_ref);  // forward ran
  double grad_err = 0;
  if (bwd) {
    out_err = std::max(out_err, max_relative_error(widened(dxg), dx_ref));
    grad_err = std::max(max_relative_error(dscale, ds_ref),
                        max_relative_error(dshift, db_ref));
  }
  const double tol = std::is_same_v<P, float> ? 1e-4 : 1e-10;
  r.max_rel_err = std::max(out_err, grad_err);
  r.status = out_err <= rounded_tolerance<T>(tol) && grad_err <= tol
                 ? "PASS"
                 : "FAIL";
  return r;
}

// oneDNN's batch normalisation primitives (training forward with scale and
// shift, backward) on the whole tensor, channels-last.
BenchResult run_onednn(const BenchOptions& o, const ConvProblem& problem) {
  using dnnl::memory;
  const Shape& s = problem.src_shape;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::desc md(
      memory::dims(s.begin(), s.end()), memory::data_type::f32,
      s.ndims() == 5 ? memory::format_tag::ndhwc : memory::format_tag::nhwc);
  const auto flags = dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::batch_normalization_forward::primitive_desc fpd(
      {dnnl::prop_kind::forward_training, md, float(kEpsilon), flags}, engine);
  const dnnl::batch_normalization_backward::primitive_desc bpd(
      {dnnl::prop_kind::backward, md, md, float(kEpsilon), flags}, engine, fpd);
  if (o.verbose) std::printf("oneDNN: %s\n", fpd.impl_info_str());
  const memory::desc cd({s[1]}, memory::data_type::f32, memory::format_tag::x);
  auto filled = [&](const memory::desc& md, unsigned seed) {
    return random_memory(md, engine, seed);
  };

  memory x = filled(md, 1), y = filled(md, 2), dy = filled(md, 3),
         dx = filled(md, 4), scale = filled(cd, 5), shift = filled(cd, 6),
         mean = filled(cd, 7), var = filled(cd, 8), dscale = filled(cd, 9),
         dshift = filled(cd, 10);
  dnnl::batch_normalization_forward fwd(fpd);
  dnnl::batch_normalization_backward bwd(bpd);
  const bool run_fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool run_bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  auto forward = [&] {
    fwd.execute(stream, {{DNNL_ARG_SRC, x},
                         {DNNL_ARG_DST, y},
                         {DNNL_ARG_SCALE, scale},
                         {DNNL_ARG_SHIFT, shift},
                         {DNNL_ARG_MEAN, mean},
                         {DNNL_ARG_VARIANCE, var}});
  };
  if (!run_fwd) forward();
  BenchResult r;
  time_runs(
      o,
      [&] {
        if (run_fwd) forward();
        if (run_bwd) {
          bwd.execute(stream, {{DNNL_ARG_SRC, x},
                               {DNNL_ARG_DIFF_DST, dy},
                               {DNNL_ARG_SCALE, scale},
                               {DNNL_ARG_SHIFT, shift},
                               {DNNL_ARG_MEAN, mean},
                               {DNNL_ARG_VARIANCE, var},
                               {DNNL_ARG_DIFF_SRC, dx},
                               {DNNL_ARG_DIFF_SCALE, dscale},
                               {DNNL_ARG_DIFF_SHIFT, dshift}});
        }
        stream.wait();
        return 0.0;
      },
      &r);
  r.gflops = flops(s, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

BenchResult run_bnorm_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
