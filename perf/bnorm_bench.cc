#include <algorithm>
#include <dnnl.hpp>
#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/reference/batch_norm.h"
#include "perf/case_bench.h"
#include "perf/layer_bench.h"
#include "perf/layer_cases.h"
#include "perf/onednn_memory.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  const Shape shape = problem.src_shape;
  ProcessGrid grid(MPI_COMM_WORLD, grid_for(o, shape, world_ranks(), problem));
  LayerCase<T, HostSpace> c =
      make_bnorm_case<T, HostSpace>(problem, grid, Exec<HostSpace>());
  // The reference in P (fp32 for bf16) on the same inputs; y and dx are
  // rounded to T. The layer does not report its allreduces' waits:
  // comm_wait_ms is 0.
  using P = Compute<T>;
  auto reference = [&](BenchDir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>& params) {
    const Index n = shape.volume(), ch = shape[1];
    std::vector<P> y(n), dx(n), dscale(ch), dshift(ch);
    reference::batch_norm_fwd_training(shape, in[0].data(), params[0].data(),
                                       params[1].data(), kBnormEpsilon,
                                       y.data());
    reference::batch_norm_bwd_training(shape, in[0].data(), in[1].data(),
                                       params[0].data(), kBnormEpsilon,
                                       dx.data(), dscale.data(),
                                       dshift.data());
    return std::vector<std::vector<P>>{y, dx, dscale, dshift};
  };
  return run_host_case(o, grid, c, bnorm_flops(shape, o.dir),
                       std::is_same_v<P, float> ? 1e-4 : 1e-10, reference);
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
      engine, dnnl::prop_kind::forward_training, md, md, float(kBnormEpsilon),
      flags);
  const dnnl::batch_normalization_backward::primitive_desc bpd(
      engine, dnnl::prop_kind::backward, md, md, md, float(kBnormEpsilon),
      flags, fpd);
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
  r.gflops = bnorm_flops(s, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

double bnorm_flops(const Shape& shape, BenchDir dir) {
  const double n = static_cast<double>(shape.volume());
  return (runs_pass(dir, BenchDir::kForward) ? 7 * n : 0) +
         (runs_pass(dir, BenchDir::kBackwardData) ? 9 * n : 0);
}

BenchResult run_bnorm_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
