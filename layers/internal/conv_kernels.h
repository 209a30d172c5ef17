// Internal: what the layers built on local convolutions (Convolution<T,
// Space>, Deconvolution<T, Space>) take from a memory space beyond its
// primitives on the layer's Exec<Space> (kernels/space_ops.h: zero, copy,
// fill_per_channel, add_per_channel, sum_per_channel; sendrecv in
// layers/internal/channel_collective.h):
//
//   // The local convolution of a plan's call, made from the context
//   // (layers/internal/space_kernel.h; the GPU's cuDNN kernels on the
//   // context's shared cuDNN handle and workspace, with the layer's
//   // GpuConvOptions):
//   template <typename T>
//   struct SpaceKernel<ConvKernelCall, T, Space> {
//     using type = ...;   // forward, backward_data, backward_weights
//     static type make(const Exec<Space>&, const ConvKernelCall&,
//                      const GpuConvOptions&);
//   };
//   // Before the kernels are made (collective over comm): each call's
//   // implementation set to the one to run (the host's measured search;
//   // the GPU leaves the calls alone).
//   template <typename T>
//   void choose_conv_impls(const Exec<Space>&, MPI_Comm comm,
//                          const std::vector<ConvKernelCall*>& calls,
//                          const CpuConvOptions&, KernelCache& own);
//   // After (collective over comm): ranks run the same choice for each
//   // problem (the GPU's timed cuDNN search; the host chose before).
//   template <typename K>   // the space's kernel type
//   void agree_conv_kernels(const Exec<Space>&, MPI_Comm comm,
//                           const std::vector<std::optional<K>*>& kernels);
//   // The communicators a layer's collectives run on and the collectives:
//   template <typename T>
//   struct ConvComms<T, Space> {
//     ConvComms(const Exec<Space>&, const HaloSetupOptions&);
//     struct Grads;      // the gradient allreduce: (comms, comm, weights,
//                        // bias); zero, weights, bias, start, wait, poke
//     struct Channels;   // channel parallelism's allgather and
//                        // reduce_scatter: (comms, comm, channels, cells)
//     using Array = ...; // a buffer of the space: resize, data, size
//   };
//
// Defined in layers/internal/host_conv_kernels.h (oneDNN and reference
// kernels, MPI collectives) and layers/internal/device_conv_kernels.h
// (cuDNN, NCCL or host-staged collectives). A new memory space defines
// these once for both layers.
#ifndef DISTCONV_LAYERS_INTERNAL_CONV_KERNELS_H_
#define DISTCONV_LAYERS_INTERNAL_CONV_KERNELS_H_

#include <mpi.h>

#include <optional>
#include <utility>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/exec.h"
#include "distconv/strided_view.h"
#include "kernels/conv_impl.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/space_kernel.h"

namespace distconv::internal {

// The three passes a local convolution kernel runs on the space's views
// (make_kernel checks a space's kernel against them).
template <>
struct KernelInterface<ConvKernelCall> {
  template <typename K, typename T, typename Space>
  using passes = decltype(
      // dst = conv(src) (+ bias)
      std::declval<const K&>().forward(
          std::declval<StridedView<const T, Space>>(),
          std::declval<const Compute<T>*>(), std::declval<const Compute<T>*>(),
          std::declval<StridedView<T, Space>>()),
      // diff_src = the adjoint of forward on diff_dst
      std::declval<const K&>().backward_data(
          std::declval<StridedView<const T, Space>>(),
          std::declval<const Compute<T>*>(),
          std::declval<StridedView<T, Space>>()),
      // the weight (and bias) gradients added
      std::declval<const K&>().backward_weights(
          std::declval<StridedView<const T, Space>>(),
          std::declval<StridedView<const T, Space>>(),
          std::declval<Compute<T>*>(), std::declval<Compute<T>*>()));
};

template <typename T, typename Space>
struct ConvComms;

// Declared for both spaces here (so that the executors name them before
// the space's header defines them).
template <typename T>
void choose_conv_impls(const Exec<HostSpace>& exec, MPI_Comm comm,
                       const std::vector<ConvKernelCall*>& calls,
                       const CpuConvOptions& cpu, KernelCache& own);
template <typename T>
void choose_conv_impls(const Exec<DeviceSpace>& exec, MPI_Comm comm,
                       const std::vector<ConvKernelCall*>& calls,
                       const CpuConvOptions& cpu, KernelCache& own);
template <typename K>
void agree_conv_kernels(const Exec<HostSpace>& exec, MPI_Comm comm,
                        const std::vector<std::optional<K>*>& kernels);
template <typename K>
void agree_conv_kernels(const Exec<DeviceSpace>& exec, MPI_Comm comm,
                        const std::vector<std::optional<K>*>& kernels);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_CONV_KERNELS_H_
