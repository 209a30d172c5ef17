#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/onednn/pool.h"
#include "kernels/reference/pool.h"
#include "perf/case_bench.h"
#include "perf/layer_bench.h"
#include "perf/layer_cases.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  const PoolDesc desc = pool_desc(problem, o.alg);
  const Shape src_shape = problem.src_shape;
  const Shape dst_shape = desc.dst_shape(src_shape);
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_for(o, src_shape, world_ranks(), problem));
  LayerCase<T, HostSpace> c =
      make_pool_case<T, HostSpace>(o, problem, grid, Exec<HostSpace>());
  // The reference in Compute<T> (fp32 for bf16) on the same inputs.
  using P = Compute<T>;
  auto reference = [&](BenchDir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>&) {
    std::vector<P> y(dst_shape.volume()), dx(src_shape.volume());
    reference::pool_fwd<P>(desc, src_shape, in[0].data(), dst_shape,
                           y.data());
    reference::pool_bwd<P>(desc, src_shape, in[0].data(), dst_shape,
                           in[1].data(), dx.data());
    return std::vector<std::vector<P>>{y, dx};
  };
  return run_host_case(o, grid, c,
                       pool_operations(desc, dst_shape, o.dir),
                       std::is_same_v<P, float> ? 1e-5 : 1e-10, reference);
}

// oneDNN's pooling primitives on the whole problem, channels-last (with 16
// channels the same memory as oneDNN's blocked nChw16c).
BenchResult run_onednn(const BenchOptions& o, const ConvProblem& problem) {
  const PoolDesc desc = pool_desc(problem, o.alg);
  const Shape dst_shape = desc.dst_shape(problem.src_shape);
  onednn::Pool pool(desc, problem.src_shape, dst_shape);
  std::vector<float> x = random_vector<float>(problem.src_shape.volume(), 1);
  std::vector<float> y(dst_shape.volume()), dx(x.size());
  std::vector<float> dy = random_vector<float>(y.size(), 4);
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  if (!fwd) pool.forward(x.data(), y.data());
  BenchResult r;
  time_runs(
      o,
      [&] {
        if (fwd) pool.forward(x.data(), y.data());
        if (bwd) pool.backward(dy.data(), dx.data());
        return 0.0;
      },
      &r);
  r.gflops =
      pool_operations(desc, dst_shape, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

double pool_operations(const PoolDesc& d, const Shape& dst, BenchDir dir) {
  double ops = dst.volume();
  for (Index k : d.kernel) ops *= k;
  return ops * (dir == BenchDir::kAll ? 2 : 1);
}

BenchResult run_pool_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
