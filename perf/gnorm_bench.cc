// distconv_bench --gnorm: the distributed group normalisation (training
// forward with scale and shift, backward) against the reference loops, or
// timed. oneDNN 3.2 has no group normalisation: no baseline.
#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/reference/group_norm.h"
#include "layers/group_norm.h"
#include "perf/case_bench.h"
#include "perf/layer_bench.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  using P = Compute<T>;
  const Shape shape = problem.src_shape;
  const Index channels = shape[1];
  ProcessGrid grid(MPI_COMM_WORLD, grid_for(o, shape, world_ranks(), problem));
  GroupNormOptions options;
  options.groups = problem.desc.groups;
  options.epsilon = kBnormEpsilon;
  auto gn = std::make_shared<GroupNorm<T>>(
      grid, Distribution(shape, grid.shape()), options);
  LayerCase<T, HostSpace> c;
  DistTensor<T>& x = c.input("x", grid, gn->src_layout());
  DistTensor<T>& dy = c.input("dy", grid, gn->diff_dst_layout());
  DistTensor<T>& y = c.output("y", grid, gn->dst_layout());
  DistTensor<T>& dx = c.output("dx", grid, gn->diff_src_layout());
  P* scale = c.param("scale", Shape{channels}, 2);
  P* shift = c.param("shift", Shape{channels}, 3);
  P* dscale = c.grad("dscale", Shape{channels});
  P* dshift = c.grad("dshift", Shape{channels});
  c.grads_pass = BenchDir::kBackwardData;
  c.forward = [gn, &x, scale, shift, &y] { gn->forward(x, scale, shift, y); };
  c.backward_data = [gn, &x, &dy, scale, &dx, dscale, dshift] {
    gn->backward(x, dy, scale, dx, dscale, dshift);
  };
  c.plan = gn->describe();
  // The reference loops in double on the same inputs.
  auto reference = [&](BenchDir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>& params) {
    auto wide = [](const std::vector<P>& v) {
      return std::vector<double>(v.begin(), v.end());
    };
    const std::vector<double> xs = wide(in[0]), gs = wide(in[1]),
                              s = wide(params[0]), h = wide(params[1]);
    const Index n = shape.volume();
    std::vector<double> y(n), dx(n), dscale(channels), dshift(channels);
    reference::group_norm_fwd(shape, options.groups, xs.data(), s.data(),
                              h.data(), kBnormEpsilon, y.data());
    reference::group_norm_bwd(shape, options.groups, xs.data(), gs.data(),
                              s.data(), kBnormEpsilon, dx.data(),
                              dscale.data(), dshift.data());
    auto narrow = [](const std::vector<double>& v) {
      return std::vector<P>(v.begin(), v.end());
    };
    return std::vector<std::vector<P>>{narrow(y), narrow(dx), narrow(dscale),
                                       narrow(dshift)};
  };
  return run_host_case(o, grid, c, bnorm_flops(shape, o.dir),
                       std::is_same_v<P, float> ? 1e-4 : 1e-10, reference);
}

}  // namespace

BenchResult run_gnorm_bench(const BenchOptions& o, const ConvProblem& p) {
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
