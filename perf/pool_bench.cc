#include <vector>

#include "distconv/dist_tensor.h"
#include "layers/pooling.h"
#include "kernels/onednn/pool.h"
#include "kernels/reference/pool.h"
#include "tests/conv_check.h"
#include "perf/layer_bench.h"
#include "perf/tensor_dump.h"

namespace distconv {
namespace {

// Window cells visited per output, per pass run.
double operations(const PoolDesc& d, const Shape& dst, BenchDir dir) {
  double ops = dst.volume();
  for (Index k : d.kernel) ops *= k;
  return ops * (dir == BenchDir::kAll ? 2 : 1);
}

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  const PoolDesc desc = pool_desc(problem, o.alg);
  const Shape src_shape = problem.src_shape;
  const Shape dst_shape = desc.dst_shape(src_shape);
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_for(o, src_shape, world_ranks(), problem));
  Pooling<T> pool(grid, desc, Distribution(src_shape, grid.shape()));
  DistTensor<T> x(grid, pool.src_layout()), y(grid, pool.dst_layout());
  DistTensor<T> dy(grid, pool.diff_dst_layout());
  DistTensor<T> dx(grid, pool.diff_src_layout());
  print_plan(o, grid.rank(), pool.describe());
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  auto run = [&] {
    pool.reset_stats();
    if (fwd) pool.forward(x, y);
    if (bwd) pool.backward(x, dy, dx);
    return pool.stats().halo_wait_s;
  };
  BenchResult r;
  const std::vector<T> xg = scatter_random(o, x, 1);
  const std::vector<T> dyg = scatter_random(o, dy, 4);
  if (!fwd) pool.forward(x, y);  // max pooling's backward needs one
  time_for_mode(o, run, &r);
  r.gflops = operations(desc, dst_shape, o.dir) / (r.median_ms * 1e-3) / 1e9;
  if (o.mode == BenchMode::kPerf) return r;
  TensorDump dump(grid.comm(), o);
  dump.add("x", x);
  dump.add("dy", dy);
  dump.add("y", y);
  dump.add("dx", dx);
  dump.close();
  const std::vector<T> yg = gathered(y), dxg = gathered(dx);
  if (grid.rank() != 0) return r;
  // The reference in Compute<T> (fp32 for bf16) on the same inputs.
  using P = Compute<T>;
  const std::vector<P> xp = widened(xg);
  std::vector<P> y_ref(yg.size()), dx_ref(dxg.size());
  reference::pool_fwd<P>(desc, src_shape, xp.data(), dst_shape, y_ref.data());
  reference::pool_bwd<P>(desc, src_shape, xp.data(), dst_shape,
                         widened(dyg).data(), dx_ref.data());
  double err = max_relative_error(widened(yg), y_ref);  // forward always ran
  if (bwd) err = std::max(err, max_relative_error(widened(dxg), dx_ref));
  r.max_rel_err = err;
  const double tol = std::is_same_v<P, float> ? 1e-5 : 1e-10;
  r.status = err <= rounded_tolerance<T>(tol) ? "PASS" : "FAIL";
  return r;
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
  r.gflops = operations(desc, dst_shape, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

BenchResult run_pool_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
