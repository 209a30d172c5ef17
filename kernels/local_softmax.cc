#include "kernels/local_softmax.h"

#include <array>
#include <type_traits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/channel_cells.h"
#include "kernels/internal/cell_walk.h"
#include "kernels/onednn/softmax.h"

namespace distconv {

template <typename T>
LocalSoftmax<T>::LocalSoftmax(SoftmaxKind kind, const Shape& extent)
    : kind_(kind), extent_(extent) {
  if (std::is_same_v<T, float> && extent.volume() > 0) {
    try {
      dnnl_ = std::make_unique<onednn::Softmax>(kind_, extent);
    } catch (const Error& e) {
      dnnl_refused_ = e.what();
    }
  }
}

template <typename T>
LocalSoftmax<T>::~LocalSoftmax() = default;
template <typename T>
LocalSoftmax<T>::LocalSoftmax(LocalSoftmax&&) noexcept = default;
template <typename T>
LocalSoftmax<T>& LocalSoftmax<T>::operator=(LocalSoftmax&&) noexcept = default;

template <typename T>
template <typename... Views>
bool LocalSoftmax<T>::use_dnnl(const Views&... views) const {
  return dnnl_ != nullptr && ((views.extent() == extent_ &&
                               is_dense(views.extent(), views.strides(),
                                        StorageOrder::kChannelsLast)) &&
                              ...);
}

template <typename T>
void LocalSoftmax<T>::forward(const StridedView<const T>& x,
                              const StridedView<T>& y) const {
  if constexpr (std::is_same_v<T, float>) {
    if (use_dnnl(x, y)) return dnnl_->forward(x.data(), y.data());
  }
  const Index channels = x.extent()[1];
  internal::for_each_cell<2>(
      x.extent(), {x.strides(), y.strides()},
      [&](Index, const std::array<Index, 2>& at) {
        softmax_cell_forward(kind_, channels, x.data() + at[0], x.strides()[1],
                             y.data() + at[1], y.strides()[1]);
      });
}

template <typename T>
void LocalSoftmax<T>::backward(const StridedView<const T>& y,
                               const StridedView<const T>& dy,
                               const StridedView<T>& dx) const {
  if constexpr (std::is_same_v<T, float>) {
    if (use_dnnl(y, dy, dx)) {
      return dnnl_->backward(y.data(), dy.data(), dx.data());
    }
  }
  const Index channels = y.extent()[1];
  internal::for_each_cell<3>(
      y.extent(), {y.strides(), dy.strides(), dx.strides()},
      [&](Index, const std::array<Index, 3>& at) {
        softmax_cell_backward(kind_, channels, y.data() + at[0], y.strides()[1],
                              dy.data() + at[1], dy.strides()[1],
                              dx.data() + at[2], dx.strides()[1]);
      });
}

template <typename T>
std::string LocalSoftmax<T>::describe() const {
  if (dnnl_) {
    return dnnl_->implementation() +
           " on channels-last dense shards, loops in double otherwise";
  }
  if (!dnnl_refused_.empty()) {
    return "loops in double (" + dnnl_refused_ + ")";
  }
  return "loops in double";
}

#define DISTCONV_INSTANTIATE(T) template class LocalSoftmax<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
