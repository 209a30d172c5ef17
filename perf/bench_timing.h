// What distconv_bench's drivers share: a problem's result, the process
// grid a problem runs on, and timed runs with ranks aligned.
#ifndef DISTCONV_PERF_BENCH_TIMING_H_
#define DISTCONV_PERF_BENCH_TIMING_H_

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/fp16.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/scatter_gather.h"
#include "perf/bench_options.h"
#include "perf/conv_problem.h"
#include "perf/rank_timing.h"
#include "tests/conv_check.h"

namespace distconv {

struct BenchResult {
  std::string status = "OK";
  double median_ms = 0, min_ms = 0, gflops = 0, comm_wait_ms = 0;
  double max_rel_err = -1;  // correctness mode only
  std::string error;
};

inline double max_over_ranks(double v) {
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

inline int world_ranks() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// --grid, or all ranks along the first spatial dimension.
inline Shape grid_for(const BenchOptions& o, const Shape& shape, int ranks,
                      const ConvProblem& p) {
  if (o.grid.ndims() > 0) {
    require(o.grid.ndims() == shape.ndims(), ErrorKind::kInvalidArgument,
            "--grid=", o.grid, " does not fit the ", shape.ndims() - 2,
            "D problem ", to_string(p));
    return o.grid;
  }
  Shape g = Shape::filled(shape.ndims(), 1);
  g[2] = ranks;
  return g;
}

// Correctness mode: a random global tensor of t's shape (seeded) on rank
// 0, scattered into t; returned on rank 0 (empty elsewhere, and in perf
// mode, where t keeps its values).
template <typename T>
std::vector<T> scatter_random(const BenchOptions& o, DistTensor<T>& t,
                              unsigned seed) {
  if (o.mode != BenchMode::kCorrectness) return {};
  std::vector<T> global;
  internal::run_collectively(t.grid().comm(), [&] {  // agreed if too large
    if (t.grid().rank() == 0) {
      global = random_vector<T>(t.global_shape().volume(), seed);
    }
  });
  scatter(global.data(), t, 0);
  return global;
}

// --verbose: rank 0 prints the layer's plan.
inline void print_plan(const BenchOptions& o, int rank,
                       const std::string& describe) {
  if (o.verbose && rank == 0) std::printf("%s", describe.c_str());
}

// Median and min of per-run times (max over ranks), and the mean time
// blocked on communication; run() returns its seconds blocked.
template <typename Run>
void time_runs(const BenchOptions& o, Run run, BenchResult* r) {
  for (int i = 0; i < o.warmup; ++i) run();
  std::vector<double> times;
  double wait = 0;
  for (int i = 0; i < o.reps; ++i) {
    double waited = 0;
    times.push_back(
        slowest_rank_seconds(MPI_COMM_WORLD, [&] { waited = run(); }));
    wait += max_over_ranks(waited);
  }
  std::sort(times.begin(), times.end());
  r->median_ms = 1e3 * times[times.size() / 2];
  r->min_ms = 1e3 * times.front();
  r->comm_wait_ms = 1e3 * wait / o.reps;
}

// One untimed run (correctness mode): its time and time blocked.
template <typename Run>
void time_once(Run run, BenchResult* r) {
  const double t0 = now_seconds();
  r->comm_wait_ms = 1e3 * max_over_ranks(run());
  r->median_ms = r->min_ms = 1e3 * max_over_ranks(now_seconds() - t0);
}

// time_runs in perf mode, time_once in correctness mode.
template <typename Run>
void time_for_mode(const BenchOptions& o, Run run, BenchResult* r) {
  if (o.mode == BenchMode::kPerf) {
    time_runs(o, run, r);
  } else {
    time_once(run, r);
  }
}

// Floating-point operations of a convolution problem's passes in `dir`
// (multiply-adds count 2; a transposed convolution's are its adjoint's).
inline double conv_flops(const ConvProblem& p, BenchDir dir) {
  const Shape dst = p.desc.dst_shape(p.src_shape);
  double per_pass = 2.0 * dst.volume() * (p.desc.in_channels / p.desc.groups);
  for (Index k : p.desc.kernel) per_pass *= k;
  return per_pass * (dir == BenchDir::kAll ? 3 : 1);
}

// v in the type its reference runs in: Compute<T> (fp32 for bf16).
template <typename T>
std::vector<Compute<T>> widened(const std::vector<T>& v) {
  return std::vector<Compute<T>>(v.begin(), v.end());
}

// The PASS bound of an output of type T whose bound in fp32 or fp64 is
// `tol`: 16-bit outputs are rounded, some more than once (max-norm
// relative: bf16 2^-7, two roundings of its 8 significant bits; fp16
// 2^-9, four of its 11).
template <typename T>
double rounded_tolerance(double tol) {
  if constexpr (std::is_same_v<T, bf16>) return 0x1p-7;
  if constexpr (std::is_same_v<T, fp16>) return 0x1p-9;
  return tol;
}

// fn(T{}) for the element type of --dt (f32, f64 or bf16; f16 is taken by
// --interp alone, which calls its fp16 run itself).
template <typename Fn>
BenchResult for_dt(const BenchOptions& o, Fn fn) {
  if (o.dt == BenchDataType::kF64) return fn(double{});
  if (o.dt == BenchDataType::kBf16) return fn(bf16{});
  return fn(float{});
}

// Correctness threshold on the max-norm relative error: fp64 1e-10; fp32
// 6e-7 * sqrt(K), at least 1e-5, with K the longest sum any result is
// (rounding grows with it; bwd-weights sums over every output pixel, a
// transposed convolution's bias gradient over every pixel of its output,
// the adjoint convolution's input).
template <typename T>
double conv_tolerance(const ConvProblem& p) {
  if (!std::is_same_v<T, float>) return 1e-10;
  const Shape dst = p.desc.dst_shape(p.src_shape);
  const Shape& summed =
      p.kind == ProblemKind::kDeconvolution ? p.src_shape : dst;
  double taps = 1, pixels = summed[0];
  for (Index k : p.desc.kernel) taps *= k;
  for (int d = 2; d < summed.ndims(); ++d) pixels *= summed[d];
  const double longest =
      std::max({taps * p.desc.in_channels / p.desc.groups,
                taps * p.desc.out_channels / p.desc.groups, pixels});
  return std::max(1e-5, 6e-7 * std::sqrt(longest));
}

}  // namespace distconv

#endif  // DISTCONV_PERF_BENCH_TIMING_H_
