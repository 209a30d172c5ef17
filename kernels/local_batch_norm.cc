#include "kernels/local_batch_norm.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/target_clones.h"
#include "kernels/internal/batch_norm_blocks.h"

namespace distconv {
namespace {

// V8, F16, their loads and stores, the elementwise blocks.
using namespace internal::batch_norm_blocks;

constexpr Index kWidth = 16;      // values per block: two vectors of 8
constexpr Index kMinPeriod = 64;  // shortest chunk
// Reductions sum strips over groups of chunks of about this many values
// (16 KiB of float), then add them to their totals. Groups of 512 values
// spent as long zeroing the registers and adding them to the totals as
// reading: 16 channels in the cache on an AMD EPYC Zen 4
// (perf/batch_norm_passes_bench, 1 core) ran the moments at 15-17 GB/s
// and the gradient sums at 27-28 against 21-22 and 35 with 4096.
constexpr Index kGroupValues = 4096;
// Elementwise passes go strip by strip over groups of chunks of about this
// many values (8 KiB of float per array).
constexpr Index kElementwiseGroupValues = 2048;
// moments() merges tiles of about this many values (64 KiB of float), each
// summed about its own shift.
constexpr Index kTileValues = 16384;

// Each pass below is built per instruction set (DISTCONV_CLONES).

Index period_for(Index channels) {
  if (channels <= 0) return kWidth;
  const Index base = std::lcm(channels, kWidth);
  return base * std::max<Index>(1, (kMinPeriod + base - 1) / base);
}

// Reductions keep their accumulators in registers and read memory in
// order. Each group of chunks is summed strip by strip: a strip is up to
// kStripBlocks consecutive 16-position blocks of the period (the whole
// period when it is 64 positions, as for 16, 32 or 64 channels), read
// chunk after chunk with one accumulator per block, fully unrolled so that
// the accumulators stay in registers; the strip's totals then go into
// total[]. A period of 64 thus streams through memory in order. Measured
// on 64 MiB of float (1 core, AVX-512): the gradient sums take 5.5-6 ms,
// about a two-stream read's time; block by block down the chunks (each
// block a whole period from the last) they took 8.5 ms with 16 channels
// and 18 ms with 128; with the accumulators left in memory, 8.5-10 ms.
// f.add(acc, data offset, position) adds a chunk's 16 values at a
// position to acc (Acc: what one block accumulates); f.store(acc,
// position) adds acc to the totals; f.scalar(offset, position) adds one
// value of a partial chunk.
constexpr int kStripBlocks = 4;

// Walks the whole chunks in groups of `group` chunks, each group strip by
// strip: s.strip<kBlocks>(first chunk, chunks, first position) for strips
// of kMaxBlocks blocks and a shorter last one; then s.f.scalar(offset,
// position) for each value of a last partial chunk.
template <int kMaxBlocks, typename S>
DISTCONV_INLINE void for_each_strip(Index elements, Index period, Index group,
                                    const S& s) {
  static_assert(kMaxBlocks >= 1 && kMaxBlocks <= 4);
  constexpr Index kStrip = kMaxBlocks * kWidth;
  const Index full = elements / period;
  for (Index k0 = 0; k0 < full; k0 += group) {
    const Index chunks = std::min(group, full - k0);
    Index j0 = 0;
    for (; j0 + kStrip <= period; j0 += kStrip) {
      s.template strip<kMaxBlocks>(k0, chunks, j0);
    }
    switch ((period - j0) / kWidth) {
      case 3:
        s.template strip<3>(k0, chunks, j0);
        break;
      case 2:
        s.template strip<2>(k0, chunks, j0);
        break;
      case 1:
        s.template strip<1>(k0, chunks, j0);
        break;
      default:
        break;
    }
  }
  for (Index i = full * period; i < elements; ++i) {
    s.f.scalar(i, i - full * period);
  }
}

template <typename F>
struct ReductionStrips {
  const F& f;
  Index period;
  template <int kBlocks>
  DISTCONV_INLINE void strip(Index k0, Index chunks, Index j0) const {
    typename F::Acc acc[kBlocks]{};
    for (Index k = k0; k < k0 + chunks; ++k) {
#pragma GCC unroll 4
      for (int b = 0; b < kBlocks; ++b) {
        f.add(acc[b], k * period + j0 + b * kWidth, j0 + b * kWidth);
      }
    }
    for (int b = 0; b < kBlocks; ++b) f.store(acc[b], j0 + b * kWidth);
  }
};

// Strips of one block where the accumulators are V4: four blocks' (32
// ymm) would not stay in AVX2's 16 registers (on an AMD EPYC with AVX2
// the moments then ran at 4.5 GB/s against 7.3 with one block).
template <typename F>
DISTCONV_INLINE void reduce_strips(Index elements, Index period, const F& f) {
  constexpr int kBlocks =
      sizeof(typename F::Vec) == sizeof(V4) ? 1 : kStripBlocks;
  for_each_strip<kBlocks>(elements, period,
                          std::max<Index>(1, kGroupValues / period),
                          ReductionStrips<F>{f, period});
}

// Elementwise passes go strip by strip too, so that a strip's per-position
// factors are loaded once per group of chunks and stay in registers: a
// block then costs one load per input and one store, where reloading the
// factors (4 or 6 arrays of the period) for every block made the loads,
// not memory, set the pace. f.factors(position) loads a block's factors,
// f.block(data offset, factors) computes and stores its 16 values,
// f.scalar(offset, position) one value of a partial chunk. Measured on 64
// MiB of float with 16 channels (1 core, AVX-512): the affine pass took
// 5.7 ms reloading the factors and 3.1 ms keeping them (a memcpy: 3.3 ms).
template <typename F>
struct ElementwiseStrips {
  const F& f;
  Index period;
  template <int kBlocks>
  DISTCONV_INLINE void strip(Index k0, Index chunks, Index j0) const {
    typename F::Factors factors[kBlocks];
#pragma GCC unroll 4
    for (int b = 0; b < kBlocks; ++b) factors[b] = f.factors(j0 + b * kWidth);
    for (Index k = k0; k < k0 + chunks; ++k) {
#pragma GCC unroll 4
      for (int b = 0; b < kBlocks; ++b) {
        f.block(k * period + j0 + b * kWidth, factors[b]);
      }
    }
  }
};

template <typename F>
DISTCONV_INLINE void run_chunks(Index elements, Index period, const F& f) {
  for_each_strip<kStripBlocks>(
      elements, period, std::max<Index>(1, kElementwiseGroupValues / period),
      ElementwiseStrips<F>{f, period});
}

// Whether the reductions accumulate in 64-byte vectors (AVX-512's); in
// each clone the same answer as the clone's own instruction set gives.
DISTCONV_INLINE bool wide_accumulators() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return true;
#endif
}

template <typename T, typename Gate>
DISTCONV_INLINE void gradient_sums_with(const T* x, Gate g, Index n,
                                        Index period, const double* mean,
                                        double* total1, double* total2) {
  if (wide_accumulators()) {
    reduce_strips(n, period,
                  GradientSums<T, Gate, V8>{x, g, mean, total1, total2});
  } else {
    reduce_strips(n, period,
                  GradientSums<T, Gate, V4>{x, g, mean, total1, total2});
  }
}

template <typename T>
DISTCONV_INLINE void moments_with(const T* x, Index n, Index period,
                                  const double* shift, double* total1,
                                  double* total2) {
  if (wide_accumulators()) {
    reduce_strips(n, period, ShiftedMoments<T, V8>{x, shift, total1, total2});
  } else {
    reduce_strips(n, period, ShiftedMoments<T, V4>{x, shift, total1, total2});
  }
}

// The passes, cloned per instruction set: the reductions per type, from
// one template; the elementwise ones below, which take how to store
// (non-temporal stores, then a fence).
#define DISTCONV_PASSES(T)                                                  \
  DISTCONV_CLONES void moments_pass(const T* x, Index n, Index period,      \
                                    const double* shift, double* total1,    \
                                    double* total2) {                       \
    moments_with(x, n, period, shift, total1, total2);                      \
  }                                                                         \
  DISTCONV_CLONES void gradient_pass(const T* x, const T* dy, Index n,      \
                                     Index period, const double* mean,      \
                                     double* total1, double* total2) {      \
    gradient_sums_with(x, Ungated<T>{dy}, n, period, mean, total1, total2); \
  }

DISTCONV_INLINE void fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_PASSES)
DISTCONV_PASSES(bf16)
#undef DISTCONV_PASSES

// The gradient sums through a ReLU: the gate's factors as the forward's
// affine pass had them (float and bf16: below).
DISTCONV_CLONES void gradient_pass(const double* x, ReluGateDouble g, Index n,
                                   Index period, double* total1,
                                   double* total2) {
  gradient_sums_with(x, g, n, period, g.mean, total1, total2);
}

// Runs Block<stores, act> (a block struct of batch_norm_blocks.h, made
// from args) over the chunks; streaming stores end with a fence.
template <template <Stores, NormActivation> class Block, typename... Args>
DISTCONV_INLINE void elementwise(Index n, Index period, Stores stores,
                                 NormActivation act, const Args&... args) {
  constexpr Stores kStream = Stores::kStreaming, kPlain = Stores::kPlain;
  constexpr NormActivation kRelu = NormActivation::kRelu,
                           kNone = NormActivation::kNone;
  if (stores == kStream) {
    if (act == kRelu) {
      run_chunks(n, period, Block<kStream, kRelu>{args...});
    } else {
      run_chunks(n, period, Block<kStream, kNone>{args...});
    }
    fence();
  } else if (act == kRelu) {
    run_chunks(n, period, Block<kPlain, kRelu>{args...});
  } else {
    run_chunks(n, period, Block<kPlain, kNone>{args...});
  }
}

DISTCONV_CLONES void affine_pass(const double* x, Index n, Index period,
                                 const double* mean, const double* a,
                                 const double* b, double* y, Stores stores,
                                 NormActivation act) {
  elementwise<AffineDouble>(n, period, stores, act, x, y, mean, a, b);
}

// f: mean, a, dy_mean, k, relu_a, relu_b (the last two for kRelu; above:
// the gate's threshold, ReluGate).
DISTCONV_CLONES void diff_src_pass(const double* x, const double* dy, Index n,
                                   Index period, const double* const* f,
                                   double above, double* dx, Stores stores,
                                   NormActivation act) {
  elementwise<DiffSrcDouble>(n, period, stores, act, x, dy, dx, f[0], f[1],
                             f[2], f[3], f[4], f[5], above);
}

// The float passes on arrays stored as S (float, or bf16 widened as loaded
// and rounded as stored), Affine and DiffSrc their blocks: the gradient
// sums through a ReLU, the affine pass (f: mean_hi, mean_lo, a, b) and
// the input gradient (f: mean_hi, mean_lo, a, dy_mean_hi, dy_mean_lo, k,
// relu_a, relu_b).
#define DISTCONV_FLOAT_PASSES(S, Affine, DiffSrc)                              \
  DISTCONV_CLONES void gradient_pass(const S* x, ReluGateIn32<S> g, Index n,   \
                                     Index period, const double* mean,         \
                                     double* total1, double* total2) {         \
    gradient_sums_with(x, g, n, period, mean, total1, total2);                 \
  }                                                                            \
  DISTCONV_CLONES void affine_pass(const S* x, Index n, Index period,          \
                                   const float* const* f, S* y, Stores stores, \
                                   NormActivation act) {                       \
    elementwise<Affine>(n, period, stores, act, x, y, f[0], f[1], f[2], f[3]); \
  }                                                                            \
  DISTCONV_CLONES void diff_src_pass(                                          \
      const S* x, const S* dy, Index n, Index period, const float* const* f,   \
      float above, S* dx, Stores stores, NormActivation act) {                 \
    elementwise<DiffSrc>(n, period, stores, act, x, dy, dx, f[0], f[1], f[2],  \
                         f[3], f[4], f[5], f[6], f[7], above);                 \
  }

DISTCONV_FLOAT_PASSES(float, AffineFloat, DiffSrcFloat)
DISTCONV_FLOAT_PASSES(bf16, AffineBf16, DiffSrcBf16)
#undef DISTCONV_FLOAT_PASSES

// The default streaming threshold: this core's share of the last-level
// cache (at least 1 MiB); outputs larger than that would not stay in cache
// for the next layer anyway.
Index default_streaming_threshold() {
  long cache = 0, cores = 1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#if defined(_SC_NPROCESSORS_ONLN)
  cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
#endif
  if (cache <= 0) cache = 32L << 20;
  return std::max<Index>(Index(1) << 20, Index(cache / cores));
}

// How an elementwise pass writing `bytes` to `out` (reading `in1` and
// `in2`) stores: streaming for a large output (at least `threshold`
// bytes), written apart from its inputs (in place, its lines are in cache
// already), 16-byte aligned.
Stores stores_for(const void* out, const void* in1, const void* in2,
                  Index bytes, Index threshold) {
#if defined(__SSE2__)
  if (bytes >= threshold && out != in1 && out != in2 &&
      reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    return Stores::kStreaming;
  }
#else
  (void)out, (void)in1, (void)in2, (void)bytes, (void)threshold;
#endif
  return Stores::kPlain;
}

}  // namespace

template <typename T>
LocalBatchNorm<T>::LocalBatchNorm(Index channels)
    : channels_(channels),
      period_(period_for(channels)),
      streaming_threshold_(default_streaming_threshold()),
      gate_above_(largest_rounding_to_zero<T>()) {
  require(channels >= 0, ErrorKind::kInvalidArgument, "channel count ",
          channels, " must be >= 0");
  total1_.assign(static_cast<size_t>(period_), 0.0);
  total2_.assign(static_cast<size_t>(period_), 0.0);
  for (auto& v : rep_) v.assign(static_cast<size_t>(period_), 0.0);
  if (!std::is_same_v<T, double>) {
    for (auto& v : frep_) v.assign(static_cast<size_t>(period_), 0.0f);
  }
  for (auto* v : {&mean_, &shift_, &tile_dev_, &tile_sq_}) {
    v->assign(static_cast<size_t>(channels), 0.0);
  }
}

template <typename T>
void LocalBatchNorm<T>::set_streaming_threshold(Index bytes) {
  require(bytes >= 0, ErrorKind::kInvalidArgument, "streaming threshold ",
          bytes, " must be >= 0");
  streaming_threshold_ = bytes;
}

template <typename T>
std::string LocalBatchNorm<T>::implementation() {
#if defined(DISTCONV_HAS_CLONES)
  // The order target_clones' resolver tries.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512f";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "sse2";
#elif defined(__x86_64__)
  return "sse2";
#else
  return "portable";
#endif
}

template <typename T>
void LocalBatchNorm<T>::fold(const std::vector<double>& total,
                             double* sums) const {
  std::fill(sums, sums + channels_, 0.0);
  if (channels_ == 0) return;
  for (Index j = 0; j < period_; ++j) sums[j % channels_] += total[j];
}

template <typename T>
const double* LocalBatchNorm<T>::replicate(const double* per_channel,
                                           std::vector<double>& rep) {
  if (channels_ == 0) return rep.data();
  for (Index j = 0; j < period_; ++j) rep[j] = per_channel[j % channels_];
  return rep.data();
}

namespace internal {

void merge_moments(Index channels, Index rows, Index part_rows,
                   const double* part_mean, const double* part_m2,
                   double* mean, double* m2) {
  const double n_a = double(rows), n_b = double(part_rows), n = n_a + n_b;
  for (Index c = 0; c < channels; ++c) {
    const double delta = part_mean[c] - mean[c];
    mean[c] = rows == 0 ? part_mean[c] : mean[c] + delta * (n_b / n);
    m2[c] += part_m2[c] + (rows == 0 ? 0.0 : delta * delta * (n_a * n_b / n));
  }
}

}  // namespace internal

template <typename T>
void LocalBatchNorm<T>::moments(const T* x, Index elements, double* sums,
                                double* m2) {
  std::fill(sums, sums + channels_, 0.0);
  std::fill(m2, m2 + channels_, 0.0);
  if (channels_ == 0) return;
  // Rows (values per channel) merged so far, and their per-channel mean.
  Index rows = 0;
  std::vector<double>& mean = mean_;
  const Index tile = period_ * std::max<Index>(1, kTileValues / period_);
  for (Index s = 0; s < elements; s += tile) {
    const Index len = std::min(tile, elements - s);
    const Index tile_rows = len / channels_;
    // One pass over the tile: sums of deviations d = x - K from a shift K
    // near the mean (the mean so far; the tile's first row at first), and
    // of d^2. The tile's squared deviations from its own mean are then
    // sum d^2 - (sum d)^2 / rows, whose cancellation is only that of the
    // shift's distance from the mean: relative error about
    // eps * (1 + (mean - K)^2 / variance), in double.
    for (Index c = 0; c < channels_; ++c) {
      shift_[c] = rows == 0 ? double(x[s + c]) : mean[c];
    }
    std::fill(total1_.begin(), total1_.end(), 0.0);
    std::fill(total2_.begin(), total2_.end(), 0.0);
    moments_pass(x + s, len, period_, replicate(shift_.data(), rep_[0]),
                 total1_.data(), total2_.data());
    fold(total1_, tile_dev_.data());
    fold(total2_, tile_sq_.data());
    // The tile's sums, then its mean and squared deviations from it (in
    // place), merged into the totals.
    const double n_b = double(tile_rows);
    for (Index c = 0; c < channels_; ++c) {
      sums[c] += shift_[c] * n_b + tile_dev_[c];
      tile_sq_[c] =
          std::max(0.0, tile_sq_[c] - tile_dev_[c] * tile_dev_[c] / n_b);
      tile_dev_[c] = shift_[c] + tile_dev_[c] / n_b;
    }
    internal::merge_moments(channels_, rows, tile_rows, tile_dev_.data(),
                            tile_sq_.data(), mean.data(), m2);
    rows += tile_rows;
  }
}

template <typename T>
void LocalBatchNorm<T>::affine(const T* x, Index elements, const double* mean,
                               const double* a, const double* b, T* y,
                               NormActivation act) {
  const Stores stores =
      stores_for(y, x, x, elements * Index(sizeof(T)), streaming_threshold_);
  if constexpr (!std::is_same_v<T, double>) {
    split(mean, frep_[0], frep_[1]);
    const float* f[4] = {frep_[0].data(), frep_[1].data(),
                         replicate_float(a, frep_[2]),
                         replicate_float(b, frep_[3])};
    affine_pass(x, elements, period_, f, y, stores, act);
  } else {
    affine_pass(x, elements, period_, replicate(mean, rep_[0]),
                replicate(a, rep_[1]), replicate(b, rep_[2]), y, stores, act);
  }
}

template <typename T>
void LocalBatchNorm<T>::gradient_sums(const T* x, const T* dy, Index elements,
                                      const double* mean, double* sum_dy,
                                      double* sum_dy_dev,
                                      const ReluGate& relu) {
  std::fill(total1_.begin(), total1_.end(), 0.0);
  std::fill(total2_.begin(), total2_.end(), 0.0);
  const double* m = replicate(mean, rep_[0]);
  if (relu.a == nullptr) {
    gradient_pass(x, dy, elements, period_, m, total1_.data(), total2_.data());
  } else if constexpr (!std::is_same_v<T, double>) {
    split(mean, frep_[0], frep_[1]);
    const ReluGateIn32<T> gate{dy,
                               frep_[0].data(),
                               frep_[1].data(),
                               replicate_float(relu.a, frep_[6]),
                               replicate_float(relu.b, frep_[7]),
                               static_cast<float>(gate_above(relu))};
    gradient_pass(x, gate, elements, period_, m, total1_.data(),
                  total2_.data());
  } else {
    const ReluGateDouble gate{dy, m, replicate(relu.a, rep_[4]),
                              replicate(relu.b, rep_[5]), gate_above(relu)};
    gradient_pass(x, gate, elements, period_, total1_.data(), total2_.data());
  }
  fold(total1_, sum_dy);
  fold(total2_, sum_dy_dev);
}

template <typename T>
void LocalBatchNorm<T>::diff_src(const T* x, const T* dy, Index elements,
                                 const double* mean, const double* a,
                                 const double* dy_mean, const double* k, T* dx,
                                 const ReluGate& relu) {
  const Stores stores =
      stores_for(dx, x, dy, elements * Index(sizeof(T)), streaming_threshold_);
  const NormActivation act =
      relu.a == nullptr ? NormActivation::kNone : NormActivation::kRelu;
  if constexpr (!std::is_same_v<T, double>) {
    split(mean, frep_[0], frep_[1]);
    replicate_float(a, frep_[2]);
    split(dy_mean, frep_[3], frep_[4]);
    replicate_float(k, frep_[5]);
    if (relu.a != nullptr) {
      replicate_float(relu.a, frep_[6]);
      replicate_float(relu.b, frep_[7]);
    }
    const float* f[8];
    for (int i = 0; i < 8; ++i) f[i] = frep_[i].data();
    diff_src_pass(x, dy, elements, period_, f,
                  static_cast<float>(gate_above(relu)), dx, stores, act);
  } else {
    const double* f[6] = {replicate(mean, rep_[0]),
                          replicate(a, rep_[1]),
                          replicate(dy_mean, rep_[2]),
                          replicate(k, rep_[3]),
                          rep_[4].data(),
                          rep_[5].data()};
    if (relu.a != nullptr) {
      replicate(relu.a, rep_[4]);
      replicate(relu.b, rep_[5]);
    }
    diff_src_pass(x, dy, elements, period_, f, gate_above(relu), dx, stores,
                  act);
  }
}

template <typename T>
const float* LocalBatchNorm<T>::replicate_float(const double* per_channel,
                                                std::vector<float>& rep) {
  if (channels_ == 0) return rep.data();
  for (Index j = 0; j < period_; ++j) {
    rep[j] = static_cast<float>(per_channel[j % channels_]);
  }
  return rep.data();
}

template <typename T>
void LocalBatchNorm<T>::split(const double* per_channel, std::vector<float>& hi,
                              std::vector<float>& lo) {
  if (channels_ == 0) return;
  for (Index j = 0; j < period_; ++j) {
    const double v = per_channel[j % channels_];
    hi[j] = static_cast<float>(v);
    lo[j] = static_cast<float>(v - double(hi[j]));
  }
}

#define DISTCONV_INSTANTIATE(T) template class LocalBatchNorm<T>;
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
DISTCONV_INSTANTIATE(bf16)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
