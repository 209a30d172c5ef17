// The GPU's primitives of kernels/space_ops.h (zero, copy, sum on strided
// views of GPU memory), queued on the stream of the context: one CUDA
// thread per element of the views' merged runs
// (kernels/cuda/elementwise_kernels.h). Built only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_SPACE_OPS_H_
#define DISTCONV_KERNELS_CUDA_SPACE_OPS_H_

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/strided_view.h"
#include "kernels/cuda/elementwise_kernels.h"
#include "kernels/pointwise_dims.h"

namespace distconv {

namespace internal {
inline void same_extent(const Shape& dst, const Shape& src) {
  require(src == dst, ErrorKind::kShapeMismatch,
          "element-wise views of different extents, dst ", dst);
}
}  // namespace internal

template <typename T>
void zero(const Exec<DeviceSpace>& exec,
          const StridedView<T, DeviceSpace>& dst) {
  launch_zero<T>(pointwise_dims<1>(dst.extent(), {dst.strides()}), dst.data(),
                 exec.stream());
}

template <typename T>
void copy(const Exec<DeviceSpace>& exec,
          const StridedView<const T, DeviceSpace>& src,
          const StridedView<T, DeviceSpace>& dst) {
  internal::same_extent(dst.extent(), src.extent());
  launch_copy<T>(
      pointwise_dims<2>(dst.extent(), {dst.strides(), src.strides()}),
      dst.data(), src.data(), exec.stream());
}

template <typename T>
void sum(const Exec<DeviceSpace>& exec, const StridedView<T, DeviceSpace>& dst,
         const StridedView<const T, DeviceSpace>& a,
         const StridedView<const T, DeviceSpace>& b) {
  internal::same_extent(dst.extent(), a.extent());
  internal::same_extent(dst.extent(), b.extent());
  launch_add<T>(pointwise_dims<3>(dst.extent(),
                                  {dst.strides(), a.strides(), b.strides()}),
                dst.data(), a.data(), b.data(), exec.stream());
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_SPACE_OPS_H_
