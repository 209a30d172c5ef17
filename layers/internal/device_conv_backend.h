// Internal: ConvBackend<T, DeviceSpace> (layers/internal/conv_backend.h):
// cuDNN kernels (CudnnConv) and per-channel operations on the stream of
// the halo options, gradients summed by DeviceGradientSum. GPU builds
// only.
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_BACKEND_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_BACKEND_H_

#include <optional>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "halo/halo_options.h"
#include "kernels/cudnn/conv.h"
#include "kernels/cudnn/cudnn_context.h"
#include "kernels/cudnn/tensor_ops.h"
#include "kernels/gpu_conv_options.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/conv_backend.h"
#include "layers/internal/device_gradient_sum.h"

namespace distconv::internal {

template <typename T>
struct ConvBackend<T, DeviceSpace> {
  using Kernel = CudnnConv<T>;
  using View = StridedView<T, DeviceSpace>;
  using ConstView = StridedView<const T, DeviceSpace>;
  struct Context {
    CudnnContext cudnn;
    GpuConvOptions gpu;
    Context(const HaloSetupOptions& halo, const GpuConvOptions& options)
        : cudnn(halo.stream), gpu(options) {}
  };
  struct Grads : DeviceGradientSum<T> {
    Grads(Context& c, MPI_Comm comm, Index weights, Index bias)
        : DeviceGradientSum<T>(c.cudnn.stream(), comm, weights, bias) {}
  };
  static constexpr bool kChannelSplits = false;

  static std::optional<Kernel> kernel(Context& c,
                                      const std::optional<ConvKernelCall>& k) {
    std::optional<Kernel> out;
    if (k) {
      out.emplace(c.cudnn, k->desc, k->src_extent, k->src_strides,
                  k->dst_extent, k->dst_strides, k->pass, c.gpu);
    }
    return out;
  }
  static void fill_bias(const Context& c, const View& out, const T* b) {
    cudnn_fill_bias(c.cudnn, out, b);
  }
  static void zero(const Context& c, const View& v) {
    cudnn_fill_bias<T>(c.cudnn, v, nullptr);
  }
  static void add_per_channel(const Context& c, const View& v,
                              const T* values) {
    cudnn_add_per_channel(c.cudnn, v, values);
  }
  static void sum_per_channel(const Context& c, const ConstView& v, T* sums) {
    cudnn_sum_per_channel(c.cudnn, v, sums);
  }
  static void copy(const Context& c, const ConstView& from, const View& to) {
    cudnn_copy(c.cudnn, from, to);
  }
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_BACKEND_H_
