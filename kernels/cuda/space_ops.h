// The GPU's primitives of kernels/space_ops.h (zero, copy, sum on strided
// views of GPU memory) and its per-rank layer passes written as the host's
// calls (activations: kernels/local_activation.h; nearest upsampling:
// kernels/local_upsample.h), queued on the stream of the context: one CUDA
// thread per element of the views' merged runs
// (kernels/cuda/elementwise_kernels.h, kernels/cuda/activation_kernels.h)
// or per cell (kernels/cuda/upsample_kernels.h). Built only with
// --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_SPACE_OPS_H_
#define DISTCONV_KERNELS_CUDA_SPACE_OPS_H_

#include "distconv/activation_desc.h"
#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/pointwise_dims.h"
#include "distconv/strided_view.h"
#include "kernels/cuda/activation_kernels.h"
#include "kernels/cuda/elementwise_kernels.h"
#include "kernels/cuda/upsample_kernels.h"
#include "kernels/upsample_geometry.h"

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
  launch_zero<T>(internal::pointwise_dims<1>(dst.extent(), {dst.strides()}),
                 dst.data(), exec.stream());
}

template <typename T>
void copy(const Exec<DeviceSpace>& exec,
          const StridedView<const T, DeviceSpace>& src,
          const StridedView<T, DeviceSpace>& dst) {
  internal::same_extent(dst.extent(), src.extent());
  launch_copy<T>(
      internal::pointwise_dims<2>(dst.extent(), {dst.strides(), src.strides()}),
      dst.data(), src.data(), exec.stream());
}

template <typename T>
void sum(const Exec<DeviceSpace>& exec, const StridedView<T, DeviceSpace>& dst,
         const StridedView<const T, DeviceSpace>& a,
         const StridedView<const T, DeviceSpace>& b) {
  internal::same_extent(dst.extent(), a.extent());
  internal::same_extent(dst.extent(), b.extent());
  launch_add<T>(internal::pointwise_dims<3>(
                    dst.extent(), {dst.strides(), a.strides(), b.strides()}),
                dst.data(), a.data(), b.data(), exec.stream());
}

// dst = activation(src) on GPU memory.
template <typename T>
void activation_forward(const Exec<DeviceSpace>& exec,
                        const ActivationDesc& desc,
                        const StridedView<T, DeviceSpace>& dst,
                        const StridedView<const T, DeviceSpace>& src) {
  internal::same_extent(dst.extent(), src.extent());
  launch_activation_forward<T>(
      desc,
      internal::pointwise_dims<2>(dst.extent(), {dst.strides(), src.strides()}),
      dst.data(), src.data(), exec.stream());
}

// diff_src = activation'(sign_of) * diff_dst on GPU memory.
template <typename T>
void activation_backward(const Exec<DeviceSpace>& exec,
                         const ActivationDesc& desc,
                         const StridedView<T, DeviceSpace>& diff_src,
                         const StridedView<const T, DeviceSpace>& sign_of,
                         const StridedView<const T, DeviceSpace>& diff_dst) {
  internal::same_extent(diff_src.extent(), sign_of.extent());
  internal::same_extent(diff_src.extent(), diff_dst.extent());
  launch_activation_backward<T>(
      desc,
      internal::pointwise_dims<3>(
          diff_src.extent(),
          {diff_src.strides(), sign_of.strides(), diff_dst.strides()}),
      diff_src.data(), sign_of.data(), diff_dst.data(), exec.stream());
}

// Nearest upsampling (kernels/local_upsample.h's calls) on GPU memory.
template <typename T>
void upsample_forward(const Exec<DeviceSpace>& exec, const UpsampleFactors& f,
                      const StridedView<const T, DeviceSpace>& src,
                      const StridedView<T, DeviceSpace>& dst) {
  launch_upsample_forward<T>(f, upsample_geometry(src.extent(), src.strides()),
                             src.data(),
                             upsample_geometry(dst.extent(), dst.strides()),
                             dst.data(), exec.stream());
}

template <typename T>
void upsample_backward(const Exec<DeviceSpace>& exec, const UpsampleFactors& f,
                       const StridedView<const T, DeviceSpace>& diff_dst,
                       const StridedView<T, DeviceSpace>& diff_src) {
  launch_upsample_backward<T>(
      f, upsample_geometry(diff_dst.extent(), diff_dst.strides()),
      diff_dst.data(), upsample_geometry(diff_src.extent(), diff_src.strides()),
      diff_src.data(), exec.stream());
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_SPACE_OPS_H_
