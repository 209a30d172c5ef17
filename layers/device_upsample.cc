// The upsampling layer in GPU memory (Upsample<T, DeviceSpace>): CUDA
// kernels over the interiors, on UpsampleOptions::stream. The layer itself
// is layers/internal/upsample_impl.h. Built only with --config=cuda.
#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "kernels/cuda/upsample_kernels.h"
#include "kernels/upsample_geometry.h"
#include "layers/internal/upsample_impl.h"
#include "layers/upsample.h"

namespace distconv {
namespace internal {

template <typename T>
struct UpsampleBackend<T, DeviceSpace> {
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;
  static void forward(const UpsampleOptions& options,
                      const UpsampleFactors& f, const ConstView& src,
                      const View& dst) {
    launch_upsample_forward<T>(
        f, upsample_geometry(src.extent(), src.strides()), src.data(),
        upsample_geometry(dst.extent(), dst.strides()), dst.data(),
        options.stream);
  }
  static void backward(const UpsampleOptions& options,
                       const UpsampleFactors& f, const ConstView& diff_dst,
                       const View& diff_src) {
    launch_upsample_backward<T>(
        f, upsample_geometry(diff_dst.extent(), diff_dst.strides()),
        diff_dst.data(),
        upsample_geometry(diff_src.extent(), diff_src.strides()),
        diff_src.data(), options.stream);
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Upsample<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
