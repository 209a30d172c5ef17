// The loss layer in host memory (Loss<T>): loops over
// kernels/channel_cells.h's cell functions. The layer itself is
// layers/internal/loss_impl.h.
#include "layers/loss.h"

#include <array>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/channel_cells.h"
#include "layers/internal/cell_walk.h"
#include "layers/internal/loss_impl.h"

namespace distconv {
namespace internal {
namespace {

// The sums a backend returns (loss_impl.h): per sample n, the loss at n and
// the count at samples + n; last, the count of bad class indices.
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

template <typename T>
class LossBackend<T, HostSpace> {
 public:
  explicit LossBackend(const LossOptions&) {}

  template <typename Target>
  std::vector<double> sums(const LossCellDesc& d, LossTerms what,
                           const StridedView<const T>& x,
                           const StridedView<const Target>& t) {
    SampleSums out(x.extent()[0]);
    const Index sx = x.strides()[1], st = t.strides()[1];
    for_each_cell<2>(x.extent(), {x.strides(), t.strides()},
                     [&](Index n, const std::array<Index, 2>& at) {
                       out.add(n, what == LossTerms::kCountsOnly
                                      ? loss_cell_count(d, t.data() + at[1])
                                      : loss_cell_term(d, x.data() + at[0], sx,
                                                       t.data() + at[1], st));
                     });
    return std::move(out.values);
  }

  // sums(kLossesAndCounts) and gradient() in one pass over the cells.
  template <typename Target>
  std::vector<double> sums_and_gradient(const LossCellDesc& d, double w,
                                        const StridedView<const T>& x,
                                        const StridedView<const Target>& t,
                                        const StridedView<T>& dx) {
    SampleSums out(x.extent()[0]);
    const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
    for_each_cell<3>(
        x.extent(), {x.strides(), t.strides(), dx.strides()},
        [&](Index n, const std::array<Index, 3>& at) {
          out.add(n, loss_cell_term_and_gradient(d, w, x.data() + at[0], sx,
                                                 t.data() + at[1], st,
                                                 dx.data() + at[2], sdx));
        });
    return std::move(out.values);
  }

  template <typename Target>
  void gradient(const LossCellDesc& d, double w, const StridedView<const T>& x,
                const StridedView<const Target>& t, const StridedView<T>& dx) {
    const Index sx = x.strides()[1], st = t.strides()[1], sdx = dx.strides()[1];
    for_each_cell<3>(x.extent(), {x.strides(), t.strides(), dx.strides()},
                     [&](Index, const std::array<Index, 3>& at) {
                       loss_cell_gradient(d, w, x.data() + at[0], sx,
                                          t.data() + at[1], st,
                                          dx.data() + at[2], sdx);
                     });
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Loss<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
