// NarrowBatchNorm<T> (LocalBatchNorm<fp16>): the fp32 passes on
// fp32 copies of chunks.
#include <algorithm>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/local_batch_norm.h"

namespace distconv {
namespace {

constexpr Index kChunkValues = 1 << 16;

template <typename T>
void narrow(const float* from, Index n, T* to) {
  convert(from, static_cast<std::size_t>(n), to);
}

}  // namespace

template <typename T>
NarrowBatchNorm<T>::NarrowBatchNorm(Index channels)
    : fp32_(channels),
      chunk_(channels *
             std::max<Index>(1, kChunkValues / std::max<Index>(1, channels))),
      sums_(channels),
      m2_(channels),
      mean_(channels),
      above_(largest_rounding_to_zero<T>()) {}

template <typename T>
std::string NarrowBatchNorm<T>::implementation() {
  return LocalBatchNorm<float>::implementation() + " on fp32 copies";
}

template <typename T>
const float* NarrowBatchNorm<T>::widen(const T* from, Index n,
                                       std::vector<float>& to) const {
  to.resize(static_cast<size_t>(std::max(to.size(), size_t(n))));
  convert(from, static_cast<std::size_t>(n), to.data());
  return to.data();
}

template <typename T>
void NarrowBatchNorm<T>::moments(const T* x, Index elements, double* sums,
                                 double* m2) {
  const Index c = channels();
  std::fill(sums, sums + c, 0.0);
  std::fill(m2, m2 + c, 0.0);
  if (c == 0) return;
  // Each chunk's moments merged into the totals.
  Index rows = 0;
  chunks(elements, [&](Index s, Index n) {
    fp32_.moments(widen(x + s, n, x_), n, sums_.data(), m2_.data());
    for (Index ch = 0; ch < c; ++ch) {
      sums[ch] += sums_[ch];
      sums_[ch] /= double(n / c);  // the chunk's mean
    }
    internal::merge_moments(c, rows, n / c, sums_.data(), m2_.data(),
                            mean_.data(), m2);
    rows += n / c;
  });
}

template <typename T>
void NarrowBatchNorm<T>::affine(const T* x, Index elements, const double* mean,
                                const double* a, const double* b, T* y,
                                NormActivation act) {
  chunks(elements, [&](Index s, Index n) {
    out_.resize(std::max(out_.size(), size_t(n)));
    fp32_.affine(widen(x + s, n, x_), n, mean, a, b, out_.data(), act);
    narrow(out_.data(), n, y + s);
  });
}

template <typename T>
ReluGate NarrowBatchNorm<T>::narrow_gate(const ReluGate& relu) const {
  if (relu.a == nullptr) return relu;
  return {relu.a, relu.b, std::max(relu.above, above_)};
}

template <typename T>
void NarrowBatchNorm<T>::gradient_sums(const T* x, const T* dy, Index elements,
                                       const double* mean, double* sum_dy,
                                       double* sum_dy_dev,
                                       const ReluGate& relu) {
  const Index c = channels();
  std::fill(sum_dy, sum_dy + c, 0.0);
  std::fill(sum_dy_dev, sum_dy_dev + c, 0.0);
  chunks(elements, [&](Index s, Index n) {
    fp32_.gradient_sums(widen(x + s, n, x_), widen(dy + s, n, dy_), n, mean,
                        sums_.data(), m2_.data(), narrow_gate(relu));
    for (Index ch = 0; ch < c; ++ch) {
      sum_dy[ch] += sums_[ch];
      sum_dy_dev[ch] += m2_[ch];
    }
  });
}

template <typename T>
void NarrowBatchNorm<T>::diff_src(const T* x, const T* dy, Index elements,
                                  const double* mean, const double* a,
                                  const double* dy_mean, const double* k, T* dx,
                                  const ReluGate& relu) {
  chunks(elements, [&](Index s, Index n) {
    out_.resize(std::max(out_.size(), size_t(n)));
    fp32_.diff_src(widen(x + s, n, x_), widen(dy + s, n, dy_), n, mean, a,
                   dy_mean, k, out_.data(), narrow_gate(relu));
    narrow(out_.data(), n, dx + s);
  });
}

template class NarrowBatchNorm<fp16>;

}  // namespace distconv
