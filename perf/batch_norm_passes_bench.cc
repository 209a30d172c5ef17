// Google Benchmark of batch normalisation's per-shard passes
// (kernels/local_batch_norm.h) on one core, next to plain memory reads and
// copies of the same arrays in the same run, so each pass's bandwidth can
// be read against what the machine streams:
//   bazel run //perf:batch_norm_passes_bench -- --benchmark_repetitions=3
// Arguments: channels, values per array. bytes_per_second counts every
// array read or written once per pass, in its element type (float, or
// bf16 for the <bf16> runs: the fp32 arithmetic on bf16 arrays).
// The kRelu runs are the backward passes through a fused ReLU
// (ReluGate), as a block of convolution, batch norm and ReLU runs them.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "kernels/local_batch_norm.h"

namespace distconv {
namespace {

template <typename T = float>
struct Arrays {
  explicit Arrays(benchmark::State& state)
      : channels(state.range(0)),
        n(state.range(1)),
        x(static_cast<size_t>(n)),
        dy(static_cast<size_t>(n)),
        dx(static_cast<size_t>(n)),
        per_channel(static_cast<size_t>(channels), 0.5),
        shift(static_cast<size_t>(channels), -0.5),
        sums(static_cast<size_t>(channels)),
        sums2(static_cast<size_t>(channels)),
        kernel(channels) {
    for (Index i = 0; i < n; ++i) {
      x[i] = T(static_cast<float>(i % 7) * 0.25f);
      dy[i] = T(static_cast<float>(i % 5) * 0.5f);
    }
  }
  void count(benchmark::State& state, int arrays) const {
    state.SetBytesProcessed(state.iterations() * arrays * n *
                            static_cast<int64_t>(sizeof(T)));
  }
  // A ReLU gate that passes about half the values.
  ReluGate relu() const { return {per_channel.data(), shift.data()}; }
  Index channels, n;
  std::vector<T> x, dy, dx;
  std::vector<double> per_channel, shift, sums, sums2;
  LocalBatchNorm<T> kernel;
};

template <typename T>
void BM_moments(benchmark::State& state) {
  Arrays<T> a(state);
  for (auto _ : state) {
    a.kernel.moments(a.x.data(), a.n, a.sums.data(), a.sums2.data());
    benchmark::DoNotOptimize(a.sums.data());
  }
  a.count(state, 1);
}

template <typename T>
void BM_affine(benchmark::State& state) {
  Arrays<T> a(state);
  const double* p = a.per_channel.data();
  for (auto _ : state) {
    a.kernel.affine(a.x.data(), a.n, p, p, p, a.dx.data());
    benchmark::ClobberMemory();
  }
  a.count(state, 2);
}

// The backward passes, plain (kNone) or through a fused ReLU (kRelu).
template <typename T, NormActivation kAct>
void BM_gradient_sums(benchmark::State& state) {
  Arrays<T> a(state);
  const ReluGate gate = kAct == NormActivation::kRelu ? a.relu() : ReluGate{};
  for (auto _ : state) {
    a.kernel.gradient_sums(a.x.data(), a.dy.data(), a.n, a.per_channel.data(),
                           a.sums.data(), a.sums2.data(), gate);
    benchmark::DoNotOptimize(a.sums.data());
  }
  a.count(state, 2);
}

template <typename T, NormActivation kAct>
void BM_diff_src(benchmark::State& state) {
  Arrays<T> a(state);
  const ReluGate gate = kAct == NormActivation::kRelu ? a.relu() : ReluGate{};
  const double* p = a.per_channel.data();
  for (auto _ : state) {
    a.kernel.diff_src(a.x.data(), a.dy.data(), a.n, p, p, p, p, a.dx.data(),
                      gate);
    benchmark::ClobberMemory();
  }
  a.count(state, 3);
}

// What streaming costs: two arrays read (sixteen floats at a time into
// independent sums; compiled per instruction set like the passes, so that
// arithmetic does not limit it) and one array copied.
typedef float F16 __attribute__((vector_size(64)));
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
float sum_two(const float* x, const float* y, Index n) {
  F16 s[4] = {};
  for (Index i = 0; i + 32 <= n; i += 32) {
    F16 v[4];
    std::memcpy(&v[0], x + i, sizeof(F16));
    std::memcpy(&v[1], y + i, sizeof(F16));
    std::memcpy(&v[2], x + i + 16, sizeof(F16));
    std::memcpy(&v[3], y + i + 16, sizeof(F16));
    for (int k = 0; k < 4; ++k) s[k] += v[k];
  }
  const F16 t = s[0] + s[1] + s[2] + s[3];
  float total = 0;
  for (int k = 0; k < 16; ++k) total += t[k];
  return total;
}

void BM_read_two_arrays(benchmark::State& state) {
  Arrays<> a(state);
  for (auto _ : state) {
    float s = sum_two(a.x.data(), a.dy.data(), a.n);
    benchmark::DoNotOptimize(s);
  }
  a.count(state, 2);
}

void BM_memcpy(benchmark::State& state) {
  Arrays<> a(state);
  for (auto _ : state) {
    std::memcpy(a.dx.data(), a.x.data(), a.n * sizeof(float));
    benchmark::ClobberMemory();
  }
  a.count(state, 2);
}

// 16 Mi floats (64 MiB per array, far past the caches) with 16 and 128
// channels, and 256 Ki floats (1 MiB, in L2) for the passes' arithmetic.
void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({16, 16 << 20})->Args({128, 16 << 20})->Args({16, 256 << 10});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_read_two_arrays)->Apply(Sizes);
BENCHMARK(BM_memcpy)->Apply(Sizes);
// Every pass of T, the backward ones plain and through a ReLU.
#define DISTCONV_PASS_BENCHMARKS(T)                                         \
  BENCHMARK_TEMPLATE(BM_moments, T)->Apply(Sizes);                          \
  BENCHMARK_TEMPLATE(BM_affine, T)->Apply(Sizes);                           \
  BENCHMARK_TEMPLATE2(BM_gradient_sums, T, NormActivation::kNone)           \
      ->Apply(Sizes);                                                       \
  BENCHMARK_TEMPLATE2(BM_diff_src, T, NormActivation::kNone)->Apply(Sizes); \
  BENCHMARK_TEMPLATE2(BM_gradient_sums, T, NormActivation::kRelu)           \
      ->Apply(Sizes);                                                       \
  BENCHMARK_TEMPLATE2(BM_diff_src, T, NormActivation::kRelu)->Apply(Sizes);
DISTCONV_PASS_BENCHMARKS(float)
DISTCONV_PASS_BENCHMARKS(bf16)
#undef DISTCONV_PASS_BENCHMARKS

}  // namespace
}  // namespace distconv
