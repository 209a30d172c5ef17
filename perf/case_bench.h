// How distconv_bench runs and checks a layer case (perf/layer_case.h): the
// host drivers of --pool, --deconv, --bnorm and --eltwise against the
// reference kernels, and --device=gpu against the host layer.
//
//   LayerCase<float, HostSpace> c = make_pool_case<float, HostSpace>(...);
//   return run_host_case(o, grid, c, operations, 1e-5,
//                        [&](BenchDir dir, const auto& inputs,
//                            const auto& params) { return results; });
#ifndef DISTCONV_PERF_CASE_BENCH_H_
#define DISTCONV_PERF_CASE_BENCH_H_

#include <algorithm>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/scatter_gather.h"
#include "perf/bench_options.h"
#include "perf/bench_timing.h"
#include "perf/layer_case.h"
#include "perf/tensor_dump.h"
#include "tests/conv_check.h"

namespace distconv {

// Whether the passes of `dir` wrote result i of c (its outputs, then its
// parameters' gradients): y always (its forward runs once first where
// `dir` leaves it out: the backward passes read what it keeps), the input
// gradients with backward-data, the parameters' gradients with their pass.
template <typename T, typename Space>
bool case_result_written(const LayerCase<T, Space>& c, BenchDir dir,
                         std::size_t i) {
  if (i == 0) return true;
  if (i < c.outputs.size()) return runs_pass(dir, BenchDir::kBackwardData);
  return runs_pass(dir, c.grads_pass);
}

// Rank 0: r's error and status from the results `got` against `want` (c's
// outputs then gradients, in Compute<T>; those not written are skipped):
// PASS when the outputs (rounded to T) are within rounded_tolerance<T>(tol)
// and the gradients within tol.
template <typename T, typename Space>
void score_case(const LayerCase<T, Space>& c, BenchDir dir,
                const std::vector<std::vector<Compute<T>>>& got,
                const std::vector<std::vector<Compute<T>>>& want, double tol,
                BenchResult* r) {
  double outputs = 0, grads = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!case_result_written(c, dir, i)) continue;
    double& worst = i < c.outputs.size() ? outputs : grads;
    worst = std::max(worst, max_relative_error(got[i], want[i]));
  }
  r->max_rel_err = std::max(outputs, grads);
  r->status =
      outputs <= rounded_tolerance<T>(tol) && grads <= tol ? "PASS" : "FAIL";
}

// A host case's results in Compute<T>: the outputs gathered on rank 0
// (empty elsewhere), then the gradients.
template <typename T>
std::vector<std::vector<Compute<T>>> case_results(
    const LayerCase<T, HostSpace>& c) {
  std::vector<std::vector<Compute<T>>> out;
  for (const auto& t : c.outputs) out.push_back(widened(gathered(*t.tensor)));
  for (const auto& a : c.grads) out.push_back(a.array.read());
  return out;
}

// The host drivers' run: random global inputs (seeds 1, 2, ... in input
// order) scattered, the passes of --dir timed (time_for_mode), GFLOP/s from
// `operations`; in correctness mode every tensor dumped (--dump-dir) and
// the results compared on rank 0 with reference(dir, inputs, params): the
// results in c's order from the global inputs and the parameters (in
// Compute<T>), an empty one where not computed.
template <typename T, typename Reference>
BenchResult run_host_case(const BenchOptions& o, const ProcessGrid& grid,
                          LayerCase<T, HostSpace>& c, double operations,
                          double tol, Reference reference) {
  using P = Compute<T>;
  print_plan(o, grid.rank(), c.plan);
  std::vector<std::vector<T>> inputs;
  unsigned seed = 1;
  for (auto& t : c.inputs) {
    inputs.push_back(scatter_random(o, *t.tensor, seed++));
  }
  if (!runs_pass(o.dir, BenchDir::kForward) && c.forward) {
    c.forward();
    c.take_wait();  // not the timed runs' wait
  }
  BenchResult r;
  time_for_mode(o, [&] { return c.run(o.dir); }, &r);
  r.gflops = operations / (r.median_ms * 1e-3) / 1e9;
  if (o.mode == BenchMode::kPerf) return r;
  TensorDump dump(grid.comm(), o);
  for (const auto& t : c.inputs) dump.add(t.name, *t.tensor);
  for (const auto& a : c.params) dump.add(a.name, a.shape, a.array.data());
  for (const auto& t : c.outputs) dump.add(t.name, *t.tensor);
  for (const auto& a : c.grads) dump.add(a.name, a.shape, a.array.data());
  dump.close();
  const std::vector<std::vector<P>> got = case_results(c);
  if (grid.rank() != 0) return r;
  std::vector<std::vector<P>> wide, params;
  for (const std::vector<T>& v : inputs) wide.push_back(widened(v));
  for (const auto& a : c.params) params.push_back(a.array.read());
  score_case(c, o.dir, got, reference(o.dir, wide, params), tol, &r);
  return r;
}

}  // namespace distconv

#endif  // DISTCONV_PERF_CASE_BENCH_H_
