// Internal: the timing the measured kernel choices share
// (kernels/conv_impl_search.cc, kernels/pool_impl_search.cc): one warm-up
// run, then the fastest of a few timed runs, by the wall clock or a
// caller's stand-in timer.
#ifndef DISTCONV_KERNELS_INTERNAL_FASTEST_RUN_H_
#define DISTCONV_KERNELS_INTERNAL_FASTEST_RUN_H_

#include <algorithm>
#include <chrono>
#include <functional>

namespace distconv::internal {

// Milliseconds of one run of `run` by the steady clock.
inline float wall_clock_ms(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<float, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// `run` once to warm up (first-touch pages, oneDNN's lazy setup), then the
// least of `reps` (at least 1) times timer(impl, run) gives; an empty
// timer is the wall clock.
template <typename Impl>
float fastest_run(
    Impl impl, const std::function<void()>& run, int reps,
    const std::function<float(Impl, const std::function<void()>&)>& timer) {
  const auto time = [&] {
    return timer ? timer(impl, run) : wall_clock_ms(run);
  };
  run();
  float best = time();
  for (int r = 1; r < reps; ++r) best = std::min(best, time());
  return best;
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_FASTEST_RUN_H_
