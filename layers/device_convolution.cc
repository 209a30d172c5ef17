// The convolution in GPU memory (Convolution<T, DeviceSpace>): cuDNN
// kernels (CudnnConv) on the stream of the halo options, halos over the
// device transports, gradients summed by DeviceGradientSum. The executor
// itself is layers/internal/convolution_impl.h. Built only with
// --config=cuda.
#include "distconv/device_space.h"
#include "kernels/cudnn/conv.h"
#include "kernels/cudnn/tensor_ops.h"
#include "layers/convolution.h"
#include "layers/internal/convolution_impl.h"
#include "layers/internal/device_gradient_sum.h"

namespace distconv {
namespace internal {

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
  static void add_per_channel(const Context&, const View&, const T*) {
    throw Error(ErrorKind::kUnsupported,
                "convolution: channel parallelism runs in host memory only");
  }
  static void sum_per_channel(const Context& c, const ConstView& v, T* sums) {
    cudnn_sum_per_channel(c.cudnn, v, sums);
  }
  static void copy(const Context& c, const ConstView& from, const View& to) {
    cudnn_copy(c.cudnn, from, to);
  }
};

}  // namespace internal

template class Convolution<float, DeviceSpace>;
template class Convolution<double, DeviceSpace>;

}  // namespace distconv
