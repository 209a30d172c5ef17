// DistTensor<T, Space>: this rank's part of a tensor distributed over a
// ProcessGrid: its shard plus halos in one local buffer (row-major over the
// local shape in the layout's storage order), with strided views of the
// interior and of each halo slab.
//
// The buffer is either allocated (zeroed) by the tensor, or owned by the
// caller (a framework's memory) and wrapped. The grid must outlive the
// tensor.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2});
//   Distribution dist(Shape{4, 16, 256, 256}, grid.shape());
//   DistTensor<float> x(grid, HaloLayout(dist, HaloWidths::symmetric(
//                                                  {0, 0, 1, 1})));
//   x.interior().for_each([](const Shape& i, float& v) { v = 1; });
//   x.halo(3, Side::kLower);       // the W-lower halo slab, corners included
#ifndef DISTCONV_DIST_TENSOR_H_
#define DISTCONV_DIST_TENSOR_H_

#include <memory>
#include <utility>

#include "distconv/bf16.h"
#include "distconv/box.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/process_grid.h"
#include "distconv/strided_view.h"

namespace distconv {

template <typename T, typename Space = HostSpace>
class DistTensor {
 public:
  // Allocates a zeroed local buffer of layout.local_shape(grid.rank()).
  DistTensor(const ProcessGrid& grid, const HaloLayout& layout)
      : DistTensor(grid, layout, nullptr) {
    const Index n = size();
    owned_.reset(static_cast<T*>(Space::allocate(sizeof(T) * n)));
    data_ = owned_.get();
  }

  // Wraps a caller-owned buffer of `capacity` elements in Space; it must
  // hold at least layout.local_shape(grid.rank()).volume() elements.
  static DistTensor wrap(const ProcessGrid& grid, const HaloLayout& layout,
                         T* data, Index capacity) {
    DistTensor t(grid, layout, data);
    require(capacity >= t.size(), ErrorKind::kShapeMismatch,
            "wrapped buffer holds ", capacity, " elements, local shape ",
            t.local_shape(), " needs ", t.size());
    require(data != nullptr || t.size() == 0, ErrorKind::kInvalidArgument,
            "wrapped buffer is null");
    return t;
  }

  // Moving hands the buffer over; the moved-from tensor's data() is null.
  DistTensor(DistTensor&& other) noexcept
      : grid_(other.grid_),
        layout_(std::move(other.layout_)),
        data_(std::exchange(other.data_, nullptr)),
        owned_(std::move(other.owned_)) {}
  DistTensor& operator=(DistTensor&& other) noexcept {
    grid_ = other.grid_;
    layout_ = std::move(other.layout_);
    data_ = std::exchange(other.data_, nullptr);
    owned_ = std::move(other.owned_);
    return *this;
  }

  const ProcessGrid& grid() const { return *grid_; }
  const HaloLayout& layout() const { return layout_; }
  int part() const { return grid_->rank(); }
  int ndims() const { return layout_.ndims(); }
  const Shape& global_shape() const {
    return layout_.distribution().global_shape();
  }
  Box shard() const { return layout_.shard(part()); }  // global coordinates
  Box buffer_box() const { return layout_.buffer_box(part()); }  // global
  Shape local_shape() const { return layout_.local_shape(part()); }
  Index size() const { return local_shape().volume(); }
  bool owns_buffer() const { return owned_ != nullptr; }

  T* data() { return data_; }
  const T* data() const { return data_; }

  // Views into the local buffer (local coordinates start at the buffer's
  // lower corner), in the tensor's memory space: the host can index them
  // only for host memory (strided_view.h).
  StridedView<T, Space> buffer() {
    return StridedView<T, Space>(data_, local_shape(),
                                 layout_.local_strides(part()));
  }
  StridedView<T, Space> view(const Box& local_box) {
    return buffer().subview(local_box);
  }
  StridedView<T, Space> interior() { return view(layout_.interior(part())); }
  StridedView<T, Space> halo(int dim, Side side) {
    return view(layout_.halo_slab(part(), dim, side));
  }
  StridedView<const T, Space> buffer() const {
    return StridedView<const T, Space>(data_, local_shape(),
                                       layout_.local_strides(part()));
  }
  StridedView<const T, Space> interior() const {
    return buffer().subview(layout_.interior(part()));
  }

 private:
  struct Free {
    void operator()(T* p) const noexcept { Space::deallocate(p); }
  };

  DistTensor(const ProcessGrid& grid, const HaloLayout& layout, T* data)
      : grid_(&grid), layout_(layout), data_(data) {
    require(layout.distribution().grid_shape() == grid.shape(),
            ErrorKind::kGridMismatch, "distribution over grid ",
            layout.distribution().grid_shape(), " used with a process grid ",
            grid.shape());
  }

  const ProcessGrid* grid_;
  HaloLayout layout_;
  T* data_;
  std::unique_ptr<T, Free> owned_;
};

}  // namespace distconv

#endif  // DISTCONV_DIST_TENSOR_H_
