// The softmax layer in host memory (Softmax<T>): oneDNN on dense
// channels-last fp32 shards, loops over kernels/channel_cells.h's cell
// functions otherwise. The layer itself is layers/internal/softmax_impl.h.
#include "layers/softmax.h"

#include <array>
#include <memory>
#include <string>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "kernels/channel_cells.h"
#include "kernels/onednn/softmax.h"
#include "layers/internal/cell_walk.h"
#include "layers/internal/softmax_impl.h"

namespace distconv {
namespace internal {

template <typename T>
class SoftmaxBackend<T, HostSpace> {
 public:
  SoftmaxBackend(const SoftmaxOptions& o, const Box& shard) : kind_(o.kind) {
    if (std::is_same_v<T, float> && !shard.empty()) {
      try {
        dnnl_ = std::make_unique<onednn::Softmax>(kind_, shard.extent);
      } catch (const Error& e) {  // this rank only: no collective follows
        dnnl_refused_ = e.what();
      }
    }
  }

  void forward(const StridedView<const T>& x, const StridedView<T>& y) {
    if constexpr (std::is_same_v<T, float>) {
      if (use_dnnl(x, y)) return dnnl_->forward(x.data(), y.data());
    }
    const Index channels = x.extent()[1];
    for_each_cell<2>(x.extent(), {x.strides(), y.strides()},
                     [&](Index, const std::array<Index, 2>& at) {
                       softmax_cell_forward(kind_, channels, x.data() + at[0],
                                            x.strides()[1], y.data() + at[1],
                                            y.strides()[1]);
                     });
  }

  void backward(const StridedView<const T>& y, const StridedView<const T>& dy,
                const StridedView<T>& dx) {
    if constexpr (std::is_same_v<T, float>) {
      if (use_dnnl(y, dy, dx)) {
        return dnnl_->backward(y.data(), dy.data(), dx.data());
      }
    }
    const Index channels = y.extent()[1];
    for_each_cell<3>(y.extent(), {y.strides(), dy.strides(), dx.strides()},
                     [&](Index, const std::array<Index, 3>& at) {
                       softmax_cell_backward(kind_, channels, y.data() + at[0],
                                             y.strides()[1], dy.data() + at[1],
                                             dy.strides()[1], dx.data() + at[2],
                                             dx.strides()[1]);
                     });
  }

  std::string describe() const {
    if (dnnl_) {
      return dnnl_->implementation() +
             " on channels-last dense shards, loops in double otherwise";
    }
    if (!dnnl_refused_.empty()) {
      return "loops in double (" + dnnl_refused_ + ")";
    }
    return "loops in double";
  }

 private:
  // Whether oneDNN runs on these views (dense channels-last: the plan's
  // layouts).
  template <typename... Views>
  bool use_dnnl(const Views&... views) const {
    return dnnl_ != nullptr && (is_dense(views.extent(), views.strides(),
                                         StorageOrder::kChannelsLast) &&
                                ...);
  }

  SoftmaxKind kind_;
  // fp32 on a non-empty shard.
  std::unique_ptr<onednn::Softmax> dnnl_;
  std::string dnnl_refused_;
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Softmax<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
