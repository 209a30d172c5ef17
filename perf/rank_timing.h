// Timing across MPI ranks for the benchmarks: a call's time on the slowest
// rank, with the ranks aligned by a barrier first.
//
//   const double s = slowest_rank_seconds(comm, [&] { layer.forward(x, y); });
#ifndef DISTCONV_PERF_RANK_TIMING_H_
#define DISTCONV_PERF_RANK_TIMING_H_

#include <mpi.h>

#include <chrono>

namespace distconv {

// Seconds on a steady clock.
inline double now_seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Barrier over `comm`, fn(), then the largest time any rank took.
template <typename Fn>
double slowest_rank_seconds(MPI_Comm comm, Fn fn) {
  MPI_Barrier(comm);
  const double t0 = now_seconds();
  fn();
  const double t = now_seconds() - t0;
  double slowest = t;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

}  // namespace distconv

#endif  // DISTCONV_PERF_RANK_TIMING_H_
