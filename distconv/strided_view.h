// StridedView<T, Space>: a non-owning view of a box of a larger array in
// memory space Space, like std::mdspan with a strided layout. Interior and
// halo slabs of a DistTensor's buffer are views into the one allocation,
// not copies.
//
//   StridedView<float> v = tensor.interior();     // (N, C, H, W) of the shard
//   v({0, 1, 2, 3}) = 1.0f;                        // element at local index
//   v.for_each([](const Shape& i, float& x) { x = 0; });
//
// A view carries its memory space: element access (operator(), for_each)
// exists only where the host can read the memory (Space::kHostAccessible),
// so host code indexing a view of GPU memory does not compile. Extents,
// strides, data() and subview() work in every space (for kernels and
// copies that run where the memory is).
#ifndef DISTCONV_STRIDED_VIEW_H_
#define DISTCONV_STRIDED_VIEW_H_

#include <type_traits>

#include "distconv/box.h"
#include "distconv/error.h"
#include "distconv/memory_space.h"
#include "distconv/shape.h"

namespace distconv {

template <typename T, typename Space = HostSpace>
class StridedView {
  // For element access: a dependent condition, so that it removes the
  // member (SFINAE) instead of failing the class.
  template <typename S>
  using IfHost = std::enable_if_t<S::kHostAccessible, int>;

 public:
  using memory_space = Space;

  StridedView(T* data, const Shape& extent, const Shape& strides)
      : data_(data), extent_(extent), strides_(strides) {}
  // A view of a whole contiguous row-major array.
  static StridedView contiguous(T* data, const Shape& extent) {
    return StridedView(data, extent, row_major_strides(extent));
  }

  // A read-only view of the same elements.
  operator StridedView<const T, Space>() const {
    return StridedView<const T, Space>(data_, extent_, strides_);
  }

  T* data() const { return data_; }
  const Shape& extent() const { return extent_; }
  const Shape& strides() const { return strides_; }
  int ndims() const { return extent_.ndims(); }
  Index size() const { return extent_.volume(); }

  template <typename S = Space, IfHost<S> = 0>
  T& operator()(const Shape& index) const {
    return data_[offset_of(index)];
  }

  // The view of `box`, given in this view's coordinates.
  StridedView subview(const Box& box) const {
    require(Box{Shape::filled(ndims(), 0), extent_}.contains(box),
            ErrorKind::kShapeMismatch, "box ", box,
            " does not fit in a view of extent ", extent_);
    T* origin = box.empty() ? data_ : data_ + offset_of(box.lower);
    return StridedView(origin, box.extent, strides_);
  }

  // Calls fn(index, element) for every element, last dimension fastest.
  template <typename Fn, typename S = Space, IfHost<S> = 0>
  void for_each(Fn fn) const {
    if (size() == 0) return;
    Shape i = Shape::filled(ndims(), 0);
    while (true) {
      fn(static_cast<const Shape&>(i), data_[offset_of(i)]);
      int d = ndims() - 1;
      while (d >= 0 && ++i[d] == extent_[d]) i[d--] = 0;
      if (d < 0) return;
    }
  }

 private:
  Index offset_of(const Shape& index) const {
    Index offset = 0;
    for (int d = 0; d < ndims(); ++d) offset += index[d] * strides_[d];
    return offset;
  }

  T* data_;
  Shape extent_;
  Shape strides_;
};

}  // namespace distconv

#endif  // DISTCONV_STRIDED_VIEW_H_
