// Internal: ConvBackend<T, Space>, what runs the leaves of the layers
// built on local convolutions (Convolution<T, Space>,
// Deconvolution<T, Space>) in one memory space:
//
//   template <typename T>
//   struct ConvBackend<T, HostSpace> {
//     struct Kernel : LocalConv<T>;             // forward, backward_data,
//                                               // backward_weights on views
//     using Grads = GradientSum<Compute<T>>;    // the gradient allreduce
//     struct Context;                           // made from the layer's
//                                               // Exec<Space> and options,
//                                               // keeping the Exec (zero,
//                                               // copy: kernels/space_ops.h)
//     using Channels = ChannelCollective<T>;    // channel parallelism's
//                                               // allgather, reduce_scatter
//     using Array = std::vector<T>;             // a buffer of the space
//     static std::optional<Kernel> kernel(Context&, call);
//     static void agree(Context&, comm, kernels);  // ranks pick alike
//                                               // (collective)
//     static void fill_bias(const Context&, view, bias);  // or 0
//     static void add_per_channel(const Context&, view, values);
//     static void sum_per_channel(const Context&, view, sums);
//   };
//
// Two members exchange pieces with the space's sendrecv on the context's
// Exec (layers/internal/channel_collective.h; the GPU's in
// layers/internal/device_channel_collective.h).
//
// Defined in layers/internal/host_conv_backend.h (oneDNN and reference
// kernels, MPI gradient sums) and layers/internal/device_conv_backend.h
// (cuDNN, GPU gradient sums, host-staged channel collectives).
#ifndef DISTCONV_LAYERS_INTERNAL_CONV_BACKEND_H_
#define DISTCONV_LAYERS_INTERNAL_CONV_BACKEND_H_

namespace distconv::internal {

template <typename T, typename Space>
struct ConvBackend;

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_CONV_BACKEND_H_
