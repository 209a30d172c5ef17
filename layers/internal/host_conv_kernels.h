// Internal: the host's convolution kernels and collectives
// (layers/internal/conv_kernels.h): LocalConv running each call's
// implementation, chosen by the plan's heuristic or, with
// ConvImplSearch::kMeasured, the fastest any rank timed for each problem;
// gradients summed and channel blocks gathered with MPI.
#ifndef DISTCONV_LAYERS_INTERNAL_HOST_CONV_KERNELS_H_
#define DISTCONV_LAYERS_INTERNAL_HOST_CONV_KERNELS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "distconv/exec.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"
#include "halo/halo_options.h"
#include "kernels/conv_impl_search.h"
#include "kernels/gpu_conv_options.h"
#include "kernels/kernel_cache.h"
#include "kernels/local_conv.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/algo_agreement.h"
#include "layers/internal/channel_collective.h"
#include "layers/internal/conv_kernels.h"
#include "layers/internal/gradient_sum.h"
#include "layers/internal/space_kernel.h"

namespace distconv::internal {

template <typename T>
struct SpaceKernel<ConvKernelCall, T, HostSpace> {
  using type = LocalConv<T>;
  // The call's implementation (choose_conv_impls() set it).
  static type make(const Exec<HostSpace>&, const ConvKernelCall& c,
                   const GpuConvOptions&) {
    return type(c.desc, c.src_extent, c.src_strides, c.dst_extent,
                c.dst_strides, c.pass, c.impl);
  }
};

// heuristic: the plan's implementations (16-bit calls: native16 where
// heuristic_local_conv_impl() takes it). measured: for each call the cache's
// choice (the caller's, else `own`), else the fastest this rank times
// (then in the cache, so that the layer's other calls of the problem take
// it); then, for each problem, the fastest any rank found
// (layers/internal/algo_agreement.h), which the caller's cache keeps.
template <typename T>
void choose_conv_impls(const Exec<HostSpace>&, MPI_Comm comm,
                       const std::vector<ConvKernelCall*>& calls,
                       const CpuConvOptions& cpu, KernelCache& own) {
  if (cpu.search == ConvImplSearch::kHeuristic) {
    if constexpr (kNarrow<T>) {
      for (ConvKernelCall* c : calls) {
        c->impl = heuristic_local_conv_impl<T>(
            c->desc, c->src_extent, c->src_strides, c->dst_extent,
            c->dst_strides, c->pass, c->impl);
      }
    }
    return;
  }
  KernelCache& cache = cpu.cache ? *cpu.cache : own;
  std::vector<AlgoChoice> mine;
  for (const ConvKernelCall* c : calls) {
    const std::uint64_t key = problem_key(
        conv_problem(c->desc, c->src_extent, c->src_strides, c->dst_extent,
                     c->dst_strides, c->pass, element_name<T>()));
    const auto hit = cache.find_conv(key);
    cache.record_lookup(hit.has_value());
    ConvImplTiming pick;
    if (hit) {
      pick = {hit->impl, hit->ms};
    } else {
      pick = time_conv_impls<T>(c->desc, c->src_extent, c->src_strides,
                                c->dst_extent, c->dst_strides, c->pass,
                                cpu.timing);
      cache.put(key, ConvChoice{pick.impl, pick.ms});
    }
    mine.push_back({key, static_cast<std::int32_t>(pick.impl), 0, pick.ms});
  }
  const std::vector<AlgoChoice> use = agree_on_algorithms(comm, mine);
  run_collectively(comm, [&] {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const auto impl = static_cast<ConvImpl>(use[i].algorithm);
      calls[i]->impl = impl;
      if (cpu.cache)
        cpu.cache->put(use[i].problem, ConvChoice{impl, use[i].ms});
    }
  });
}

// The host's kernels run what choose_conv_impls() chose: nothing to agree.
template <typename K>
void agree_conv_kernels(const Exec<HostSpace>&, MPI_Comm,
                        const std::vector<std::optional<K>*>&) {}

template <typename T>
struct ConvComms<T, HostSpace> {
  using P = Compute<T>;  // weights, bias, gradients
  ConvComms(const Exec<HostSpace>&, const HaloSetupOptions&) {}
  struct Grads : GradientSum<P> {
    Grads(ConvComms&, MPI_Comm comm, Index weights, Index bias)
        : GradientSum<P>(comm, weights, bias) {}
  };
  struct Channels : ChannelCollective<T> {
    Channels(ConvComms&, MPI_Comm comm, const BlockPartition& channels,
             Index positions)
        : ChannelCollective<T>(comm, channels, positions) {}
  };
  using Array = std::vector<T>;
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_HOST_CONV_KERNELS_H_
