// Internal: the GPU's convolution kernels and collectives
// (layers/internal/conv_kernels.h): cuDNN kernels (CudnnConv) on the
// layer's Exec<DeviceSpace>, its stream and its shared cuDNN handle and
// workspace (cudnn_context()); ranks agree on cuDNN's timed choices;
// gradients summed by DeviceGradientSum, channel blocks gathered and
// summed by DeviceChannelCollective (over NCCL with the NCCL halo
// transport, else staged through the host). GPU builds only.
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_KERNELS_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_KERNELS_H_

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_options.h"
#include "halo/nccl_comm.h"
#include "kernels/conv_impl.h"
#include "kernels/cuda/space_ops.h"
#include "kernels/cudnn/conv.h"
#include "kernels/cudnn/cudnn_context.h"
#include "kernels/cudnn/tensor_ops.h"
#include "kernels/gpu_conv_options.h"
#include "kernels/kernel_cache.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/algo_agreement.h"
#include "layers/internal/conv_kernels.h"
#include "layers/internal/device_channel_collective.h"
#include "layers/internal/device_gradient_sum.h"
#include "layers/internal/space_kernel.h"

namespace distconv::internal {

template <typename T>
struct SpaceKernel<ConvKernelCall, T, DeviceSpace> {
  using type = CudnnConv<T>;
  static type make(const Exec<DeviceSpace>& exec, const ConvKernelCall& k,
                   const GpuConvOptions& gpu) {
    return type(cudnn_context(exec), k.desc, k.src_extent, k.src_strides,
                k.dst_extent, k.dst_strides, k.pass, gpu);
  }
};

// cuDNN chooses its algorithms when the kernels are made: the calls'
// CPU implementations do not apply.
template <typename T>
void choose_conv_impls(const Exec<DeviceSpace>&, MPI_Comm,
                       const std::vector<ConvKernelCall*>&,
                       const CpuConvOptions&, KernelCache&) {}

// Collective over `comm`: for each problem, every rank runs the fastest
// algorithm any rank chose for it (layers/internal/algo_agreement.h).
template <typename Kernel>
void agree_conv_kernels(const Exec<DeviceSpace>&, MPI_Comm comm,
                        const std::vector<std::optional<Kernel>*>& kernels) {
  std::vector<AlgoChoice> mine;
  std::vector<Kernel*> chosen;
  for (std::optional<Kernel>* k : kernels) {
    if (!*k) continue;
    mine.push_back({problem_key((*k)->problem()), (*k)->algorithm(),
                    (*k)->math(), (*k)->algorithm_ms()});
    chosen.push_back(&**k);
  }
  const std::vector<AlgoChoice> use = agree_on_algorithms(comm, mine);
  run_collectively(comm, [&] {
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      Kernel& k = *chosen[i];
      k.set_algorithm(use[i].algorithm, use[i].math);
      const GpuConvOptions& o = k.options();
      if (o.cache && o.search == GpuAlgoSearch::kMeasured) {
        o.cache->put(use[i].problem,
                     {use[i].algorithm, use[i].math, use[i].ms, k.on_copies()});
      }
    }
  });
}

// The layer's communicators: with the NCCL halo transport, NCCL
// communicators of its own for the channel collectives (one per MPI
// communicator, in the order made, the same on every rank, destroyed in
// reverse) and the gradient sums.
template <typename T>
struct ConvComms<T, DeviceSpace> {
  using P = Compute<T>;  // weights, bias, gradients
  Exec<DeviceSpace> exec;
  HaloSetupOptions halo;
  std::vector<std::pair<MPI_Comm, NcclComm>> channel_nccl;
  ConvComms(const Exec<DeviceSpace>& e, const HaloSetupOptions& h)
      : exec(e), halo(h) {}
  ConvComms(const ConvComms&) = delete;
  ConvComms& operator=(const ConvComms&) = delete;
  ~ConvComms() {
    while (!channel_nccl.empty()) channel_nccl.pop_back();
  }
  // Whether the layer's collectives over `comm` run on NCCL: with the
  // NCCL halo transport, over more than one rank.
  bool nccl_over(MPI_Comm comm) const {
    int size = 0;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    return halo.transport == HaloTransport::kNccl && size > 1;
  }
  // Collective over `comm` on first use (when the layer is made): the
  // channel collectives' NCCL communicator over its ranks, or null (MPI
  // on host copies) where nccl_over(comm) is false. NCCL needs one GPU
  // per rank: kUnsupported on every rank where two share one.
  ncclComm_t channel_comm(MPI_Comm comm) {
    if (!nccl_over(comm)) return nullptr;
    for (const auto& [c, nccl] : channel_nccl) {
      if (c == comm) return nccl.get();
    }
    require_distinct_gpus(comm, "the NCCL channel collectives");
    channel_nccl.emplace_back(std::piecewise_construct,
                              std::forward_as_tuple(comm),
                              std::forward_as_tuple(comm, nullptr));
    return channel_nccl.back().second.get();
  }
  // With the NCCL halo transport the gradients are summed by NCCL too, on
  // a communicator over the summing ranks (the caller's where it spans
  // them, else one of the layer's own), made collectively; none for one
  // rank.
  struct GradientComm {
    std::optional<NcclComm> nccl;
    GradientComm(const ConvComms& c, MPI_Comm comm) {
      if (c.nccl_over(comm)) nccl.emplace(comm, c.halo.nccl_comm);
    }
  };
  struct Grads : private GradientComm, DeviceGradientSum<P> {
    Grads(ConvComms& c, MPI_Comm comm, Index weights, Index bias)
        : GradientComm(c, comm),
          DeviceGradientSum<P>(
              c.exec.stream(), comm, weights, bias,
              GradientComm::nccl ? GradientComm::nccl->get() : nullptr) {}
  };
  struct Channels : DeviceChannelCollective<T> {
    Channels(ConvComms& c, MPI_Comm comm, const BlockPartition& channels,
             Index positions)
        : DeviceChannelCollective<T>(c.exec.stream(), comm, channels, positions,
                                     c.channel_comm(comm)) {}
  };
  // A device array of T (zeroed by resize()).
  class Array {
   public:
    void resize(Index n) {
      buffer_ = DeviceBuffer(sizeof(T) * n);
      size_ = n;
    }
    T* data() { return static_cast<T*>(buffer_.get()); }
    Index size() const { return size_; }

   private:
    DeviceBuffer buffer_;
    Index size_ = 0;
  };
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_CONV_KERNELS_H_
