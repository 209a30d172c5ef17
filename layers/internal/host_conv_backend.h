// Internal: ConvBackend<T, HostSpace> (layers/internal/conv_backend.h):
// oneDNN and reference kernels (LocalConv), gradients summed and channel
// blocks gathered with MPI, per-channel loops over channels-last runs.
#ifndef DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_
#define DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_

#include <optional>
#include <vector>

#include "distconv/strided_view.h"
#include "halo/halo_options.h"
#include "kernels/gpu_conv_options.h"
#include "kernels/local_conv.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/cell_walk.h"
#include "layers/internal/channel_collective.h"
#include "layers/internal/conv_backend.h"
#include "layers/internal/gradient_sum.h"
#include "layers/internal/local_conv_of.h"
#include "layers/internal/pointwise.h"

namespace distconv::internal {

template <typename T>
struct ConvBackend<T, HostSpace> {
  using Kernel = LocalConv<T>;
  using P = Compute<T>;  // weights, bias, gradients
  struct Context {
    Context(const HaloSetupOptions&, const GpuConvOptions&) {}
  };
  struct Grads : GradientSum<P> {
    Grads(Context&, MPI_Comm comm, Index weights, Index bias)
        : GradientSum<P>(comm, weights, bias) {}
  };
  struct Channels : ChannelCollective<T> {
    Channels(Context&, MPI_Comm comm, const BlockPartition& channels,
             Index positions)
        : ChannelCollective<T>(comm, channels, positions) {}
  };
  using Array = std::vector<T>;

  static std::optional<Kernel> kernel(Context&,
                                      const std::optional<ConvKernelCall>& c) {
    return local_conv_of<T>(c);
  }
  // The host kernels have no algorithms to agree on.
  static void agree(MPI_Comm, const std::vector<std::optional<Kernel>*>&) {}
  static void fill_bias(const Context&, const StridedView<T>& out, const P* b) {
    out.for_each([&](const Shape& i, T& v) { v = b ? T(b[i[1]]) : T(0); });
  }
  static void zero(const Context&, const StridedView<T>& v) {
    internal::zero(v);
  }
  static void add_per_channel(const Context&, const StridedView<T>& v,
                              const P* values) {
    internal::add_per_channel(v, values);
  }
  static void sum_per_channel(const Context&, const StridedView<const T>& v,
                              P* sums) {
    internal::sum_per_channel(v, sums);
  }
  static void copy(const Context&, const StridedView<const T>& from,
                   const StridedView<T>& to) {
    internal::copy(from, to);
  }
  static void swap(Context&, MPI_Comm comm, const T* send, Index n_send,
                   int to, T* recv, Index n_recv, int from) {
    sendrecv(comm, send, n_send, to, recv, n_recv, from);
  }
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_
