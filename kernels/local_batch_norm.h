// LocalBatchNorm<T>: the per-channel passes of a batch normalisation over
// one rank's shard, a dense channels-last array (N, [D,] H, W, C) seen as
// `elements` values, value i in channel i % C. Planned once per channel
// count (scratch of one period); the distributed layer
// (layers/batch_norm.h) adds the reductions across ranks.
//
//   LocalBatchNorm<float> k(channels);
//   k.moments(x, n, sums, m2);     // sum x, sum (x - local mean)^2 per channel
//   k.affine(x, n, mean, a, b, y);  // (x - mean[c]) a[c] + b[c]
//
// Precision: sums accumulate in double, float inputs too. Elementwise
// passes compute in T: double in double; float in float with the means
// (of x, and of dy in diff_src) split into two floats (hi + lo), so that
// x - mean keeps float precision however large the mean is next to the
// deviation (1e4 + noise); the factors a, b, k are rounded to float. bf16
// computes as float does on its values widened as they load (exactly),
// each output rounded once to bf16 as it is stored: the float passes'
// outputs rounded, bit for bit, with half their memory traffic.
//
// Speed: the loops walk the array in chunks of a period L (a multiple of C
// and of 16) with per-position copies of the per-channel factors, so every
// block is 16 contiguous values with no modulo, computed on vectors (GCC /
// Clang vector extensions). Every pass walks groups of chunks strip by
// strip (up to 64 positions), so the elementwise passes keep a strip's
// factors in registers as the reductions keep their accumulators. Reductions
// read memory in order, in strips of up to 64 positions with their accumulators
// in registers (one pass for each reduction; perf/batch_norm_passes_bench
// measures them against plain streaming). On x86-64 each pass is compiled for
// AVX-512, AVX2 and baseline SSE2 and picked at load time (GCC target_clones);
// implementation() names the choice. Elementwise outputs larger than
// streaming_threshold() bytes, apart from their inputs and 16-byte aligned, are
// written with non-temporal stores (no read of the destination's lines first: a
// third less memory traffic).
//
// Outputs may alias inputs exactly (y == x, dx == dy or x): every value is
// read before its position is written. Per-channel arrays hold C doubles;
// sums are overwritten.
#ifndef DISTCONV_KERNELS_LOCAL_BATCH_NORM_H_
#define DISTCONV_KERNELS_LOCAL_BATCH_NORM_H_

#include <algorithm>
#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/shape.h"
#include "kernels/norm_activation.h"

namespace distconv {

// Defined for float, double and bf16 (fp16: NarrowBatchNorm, below).
template <typename T>
class LocalBatchNorm {
 public:
  explicit LocalBatchNorm(Index channels);  // channels >= 0

  Index channels() const { return channels_; }
  Index period() const { return period_; }
  // The instruction set the passes run with: "avx512f", "avx2" or "sse2"
  // (or "portable" off x86-64).
  static std::string implementation();
  // Output size in bytes from which elementwise passes write with
  // non-temporal stores (default: this core's share of the last-level
  // cache, at least 1 MiB).
  Index streaming_threshold() const { return streaming_threshold_; }
  void set_streaming_threshold(Index bytes);  // >= 0

  // Per channel c with r = elements / C values: sums[c] = their sum and
  // m2[c] = the sum of their squared deviations from their mean
  // sums[c] / r. One read of the array: tile by tile, sums of the
  // deviations from a shift near the mean (the mean of the tiles before;
  // the tile's first row at first) and of their squares, in double; the
  // tile's squared deviations from its own mean follow with no more
  // cancellation than the shift's distance from the mean brings, and
  // Chan et al.'s pairwise update merges the tiles.
  void moments(const T* x, Index elements, double* sums, double* m2);
  // y = (x - mean[c]) * a[c] + b[c], then `act`.
  void affine(const T* x, Index elements, const double* mean, const double* a,
              const double* b, T* y,
              NormActivation act = NormActivation::kNone);
  // sum_dy[c] = sum of dy, sum_dy_dev[c] = sum of dy * (x - mean[c]), dy
  // gated by `relu`.
  void gradient_sums(const T* x, const T* dy, Index elements,
                     const double* mean, double* sum_dy, double* sum_dy_dev,
                     const ReluGate& relu = {});
  // dx = a[c] * ((dy - dy_mean[c]) - (x - mean[c]) * k[c]): batch
  // normalisation's input gradient (dy_mean = k = 0 in inference), dy
  // gated by `relu`.
  void diff_src(const T* x, const T* dy, Index elements, const double* mean,
                const double* a, const double* dy_mean, const double* k, T* dx,
                const ReluGate& relu = {});

 private:
  void fold(const std::vector<double>& total, double* sums) const;
  const double* replicate(const double* per_channel, std::vector<double>& rep);
  const float* replicate_float(const double* per_channel,
                               std::vector<float>& rep);
  // hi + lo = per_channel[j % C] in two floats, per position j.
  void split(const double* per_channel, std::vector<float>& hi,
             std::vector<float>& lo);

  Index channels_;
  Index period_;
  Index streaming_threshold_;
  std::vector<double> total1_, total2_;
  std::vector<double> rep_[6];  // per-position factors of a pass
  std::vector<double> mean_, shift_, tile_dev_, tile_sq_;  // moments()
  std::vector<float> frep_[8];  // float's and bf16's factors
  // The ReLU gate's threshold: relu.above, at least the largest value that
  // rounds to +0 in T (bf16: half its smallest subnormal).
  double gate_above(const ReluGate& relu) const {
    return std::max(relu.above, gate_above_);
  }
  double gate_above_;
};

namespace internal {
// Chan et al.'s pairwise update, per channel c: merges a part of part_rows
// values with mean part_mean[c] and squared deviations part_m2[c] into the
// rows values merged so far (their mean[c] and m2[c]; any mean when rows
// is 0).
void merge_moments(Index channels, Index rows, Index part_rows,
                   const double* part_mean, const double* part_m2,
                   double* mean, double* m2);
}  // namespace internal

// fp16 (stored narrower than its Compute<T>, float, and with no vector
// conversion in the passes): the fp32 passes on fp32 copies of chunks of
// the arrays (a whole number of positions, about 64 Ki values each, so the
// copies stay in cache); each output rounded once. Statistics in double,
// as for float: the moments of the chunks merge as moments() merges its
// tiles. LocalBatchNorm<fp16> is this class.
template <typename T>
class NarrowBatchNorm {
 public:
  explicit NarrowBatchNorm(Index channels);

  Index channels() const { return fp32_.channels(); }
  Index period() const { return fp32_.period(); }
  static std::string implementation();
  Index streaming_threshold() const { return fp32_.streaming_threshold(); }
  void set_streaming_threshold(Index bytes) {
    fp32_.set_streaming_threshold(bytes);
  }

  void moments(const T* x, Index elements, double* sums, double* m2);
  void affine(const T* x, Index elements, const double* mean, const double* a,
              const double* b, T* y,
              NormActivation act = NormActivation::kNone);
  // Through a ReLU, the gate is the rounded forward output's sign (as the
  // activation layer sees it after an unfused forward).
  void gradient_sums(const T* x, const T* dy, Index elements,
                     const double* mean, double* sum_dy, double* sum_dy_dev,
                     const ReluGate& relu = {});
  void diff_src(const T* x, const T* dy, Index elements, const double* mean,
                const double* a, const double* dy_mean, const double* k, T* dx,
                const ReluGate& relu = {});

 private:
  // Calls fn(offset, length) over [0, elements) in chunks of chunk_.
  template <typename Fn>
  void chunks(Index elements, Fn fn) const {
    for (Index s = 0; s < elements; s += chunk_) {
      fn(s, std::min(chunk_, elements - s));
    }
  }
  const float* widen(const T* from, Index n, std::vector<float>& to) const;
  // `relu` gating where the forward's output was > +0 once rounded to T.
  ReluGate narrow_gate(const ReluGate& relu) const;

  LocalBatchNorm<float> fp32_;
  Index chunk_;  // a multiple of the channel count
  std::vector<float> x_, dy_, out_;
  std::vector<double> sums_, m2_, mean_;  // one chunk's moments, running mean
  // The largest float that rounds to +0 in T: the fp32 passes' gate
  // threshold (ReluGate::above), so that they gate on the sign of the
  // forward's output as stored in T, in the same sweep.
  double above_;
};

template <>
class LocalBatchNorm<fp16> : public NarrowBatchNorm<fp16> {
 public:
  using NarrowBatchNorm<fp16>::NarrowBatchNorm;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_BATCH_NORM_H_
