#include "kernels/local_loss.h"

#include <array>
#include <cstdint>
#include <utility>

#include "distconv/element_types.h"
#include "kernels/internal/cell_walk.h"

namespace distconv {
namespace {

// Per sample n, the loss at n and the count at samples + n; last, the
// count of bad class indices.
struct SampleSums {
  explicit SampleSums(Index samples)
      : samples(samples), values(2 * samples + 1, 0.0) {}
  void add(Index n, const LossCellTerm& term) {
    values[n] += term.loss;
    values[samples + n] += term.count;
    values[2 * samples] += term.bad;
  }
  Index samples;
  std::vector<double> values;
};

}  // namespace

template <typename T, typename Target>
std::vector<double> LocalLoss<T, Target>::sums(
    const LossCellDesc& d, LossTerms what, const StridedView<const T>& x,
    const StridedView<const Target>& t) {
  SampleSums out(x.extent()[0]);
  const Index sx = x.strides()[1], st = t.strides()[1];
  internal::for_each_cell<2>(
      x.extent(), {x.strides(), t.strides()},
      [&](Index n, const std::array<Index, 2>& at) {
        out.add(n, what == LossTerms::kCountsOnly
                       ? loss_cell_count(d, t.data() + at[1])
                       : loss_cell_term(d, x.data() + at[0], sx,
                                        t.data() + at[1], st));
      });
  return std::move(out.values);
}

template <typename T, typename Target>
std::vector<double> LocalLoss<T, Target>::sums_and_gradient(
    const LossCellDesc& d, double w, const StridedView<const T>& x,
    const StridedView<const Target>& t, const StridedView<T>& dx) {
  SampleSums out(x.extent()[0]);
  const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
  internal::for_each_cell<3>(
      x.extent(), {x.strides(), t.strides(), dx.strides()},
      [&](Index n, const std::array<Index, 3>& at) {
        out.add(n, loss_cell_term_and_gradient(d, w, x.data() + at[0], sx,
                                               t.data() + at[1], st,
                                               dx.data() + at[2], sdx));
      });
  return std::move(out.values);
}

template <typename T, typename Target>
void LocalLoss<T, Target>::gradient(const LossCellDesc& d, double w,
                                    const StridedView<const T>& x,
                                    const StridedView<const Target>& t,
                                    const StridedView<T>& dx) {
  const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
  internal::for_each_cell<3>(
      x.extent(), {x.strides(), t.strides(), dx.strides()},
      [&](Index, const std::array<Index, 3>& at) {
        loss_cell_gradient(d, w, x.data() + at[0], sx, t.data() + at[1], st,
                           dx.data() + at[2], sdx);
      });
}

#define DISTCONV_INSTANTIATE(T)    \
  template struct LocalLoss<T, T>; \
  template struct LocalLoss<T, std::int64_t>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
