// Internal (GPU builds): Elementwise<T, DeviceSpace>, the element-wise
// operations of layers/internal/pointwise.h on views of GPU memory, one
// CUDA thread per element (kernels/cuda/elementwise_kernels.h), queued on
// the stream given.
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_POINTWISE_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_POINTWISE_H_

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/strided_view.h"
#include "kernels/cuda/elementwise_kernels.h"
#include "kernels/pointwise_dims.h"
#include "layers/internal/pointwise.h"

namespace distconv::internal {

template <typename T>
struct Elementwise<T, DeviceSpace> {
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;

  static void sum(CUstream_st* stream, const View& dst, const ConstView& a,
                  const ConstView& b) {
    same_extent(dst, a.extent());
    same_extent(dst, b.extent());
    launch_add<T>(pointwise_dims<3>(dst.extent(), {dst.strides(), a.strides(),
                                                   b.strides()}),
                  dst.data(), a.data(), b.data(), stream);
  }
  static void copy(CUstream_st* stream, const ConstView& src,
                   const View& dst) {
    same_extent(dst, src.extent());
    launch_copy<T>(
        pointwise_dims<2>(dst.extent(), {dst.strides(), src.strides()}),
        dst.data(), src.data(), stream);
  }
  static void zero(CUstream_st* stream, const View& dst) {
    launch_zero<T>(pointwise_dims<1>(dst.extent(), {dst.strides()}),
                   dst.data(), stream);
  }

 private:
  static void same_extent(const View& dst, const Shape& extent) {
    require(extent == dst.extent(), ErrorKind::kShapeMismatch,
            "element-wise views of different extents, dst ", dst.extent());
  }
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_POINTWISE_H_
