// The activation layer in GPU memory (Activation<T, DeviceSpace>): CUDA
// kernels over the interiors, on ActivationOptions::stream. The layer
// itself is layers/internal/activation_impl.h. Built only with
// --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/activation_kernels.h"
#include "kernels/pointwise_dims.h"
#include "layers/activation.h"
#include "layers/internal/activation_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct ActivationBackend<T, DeviceSpace> {
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;
  static void forward(const ActivationDesc& desc,
                      const ActivationOptions& options, const View& dst,
                      const ConstView& src) {
    launch_activation_forward<T>(
        desc, pointwise_dims<2>(dst.extent(), {dst.strides(), src.strides()}),
        dst.data(), src.data(), options.stream);
  }
  static void backward(const ActivationDesc& desc,
                       const ActivationOptions& options, const View& diff_src,
                       const ConstView& sign_of, const ConstView& diff_dst) {
    launch_activation_backward<T>(
        desc,
        pointwise_dims<3>(diff_src.extent(), {diff_src.strides(),
                                              sign_of.strides(),
                                              diff_dst.strides()}),
        diff_src.data(), sign_of.data(), diff_dst.data(), options.stream);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Activation<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
