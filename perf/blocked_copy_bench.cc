// Google Benchmark of the copies into and out of oneDNN's channel-blocked
// layouts (kernels/onednn/blocked.h), next to a memcpy of the same bytes
// in the same run, on one core:
//   bazel run //perf:blocked_copy_bench -- --benchmark_repetitions=3
// Arguments: channels, spatial points per sample (float; one sample),
// channels per block. bytes_per_second counts the array read and the
// array written once per copy.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "kernels/onednn/blocked.h"

namespace distconv {
namespace {

struct Arrays {
  explicit Arrays(benchmark::State& state)
      : shape{1, state.range(0), 1, state.range(1)},
        block(state.range(2)),
        cl(static_cast<size_t>(shape.volume()), 0.5f),
        blocked(static_cast<size_t>(onednn::blocked_size(shape, block))) {}
  void count(benchmark::State& state) const {
    state.SetBytesProcessed(state.iterations() * 2 * shape.volume() *
                            static_cast<int64_t>(sizeof(float)));
  }
  Shape shape;
  Index block;
  std::vector<float> cl, blocked;
};

void BM_ToBlocked(benchmark::State& state) {
  Arrays a(state);
  for (auto _ : state) {
    onednn::channels_last_to_blocked(a.shape, a.block, a.cl.data(),
                                     a.blocked.data());
    benchmark::DoNotOptimize(a.blocked.data());
    benchmark::ClobberMemory();
  }
  a.count(state);
}

void BM_ToChannelsLast(benchmark::State& state) {
  Arrays a(state);
  for (auto _ : state) {
    onednn::blocked_to_channels_last(a.shape, a.block, a.blocked.data(),
                                     a.cl.data());
    benchmark::DoNotOptimize(a.cl.data());
    benchmark::ClobberMemory();
  }
  a.count(state);
}

void BM_Memcpy(benchmark::State& state) {
  Arrays a(state);
  for (auto _ : state) {
    std::memcpy(a.blocked.data(), a.cl.data(), a.cl.size() * sizeof(float));
    benchmark::DoNotOptimize(a.blocked.data());
    benchmark::ClobberMemory();
  }
  a.count(state);
}

// A slab in the cache (16 rows of a 1024-wide 16-channel image, 1 MiB),
// a whole 1024² 16-channel image (64 MiB), a sample of 8x64->64 128²
// (4 MiB), and 18 channels (a partly filled last block).
void Shapes(benchmark::internal::Benchmark* b) {
  b->Args({16, 16 * 1024, 8})
      ->Args({16, 16 * 1024, 16})
      ->Args({16, 1024 * 1024, 8})
      ->Args({64, 128 * 128, 8})
      ->Args({64, 128 * 128, 16})
      ->Args({18, 16 * 1024, 8});
}

BENCHMARK(BM_ToBlocked)->Apply(Shapes);
BENCHMARK(BM_ToChannelsLast)->Apply(Shapes);
BENCHMARK(BM_Memcpy)->Apply(Shapes);

}  // namespace
}  // namespace distconv
