// Internal: ConvBackend<T, HostSpace> (layers/internal/conv_backend.h):
// oneDNN and reference kernels (LocalConv) running the plan's
// implementations, or with ConvImplSearch::kMeasured the fastest any rank
// timed for each problem; gradients summed and channel blocks gathered
// with MPI, per-channel loops over channels-last runs.
#ifndef DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_
#define DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "distconv/exec.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/strided_view.h"
#include "halo/halo_options.h"
#include "kernels/conv_impl_search.h"
#include "kernels/gpu_conv_options.h"
#include "kernels/internal/cell_walk.h"
#include "kernels/kernel_cache.h"
#include "kernels/local_conv.h"
#include "kernels/space_ops.h"
#include "layers/conv_kernel_call.h"
#include "layers/internal/algo_agreement.h"
#include "layers/internal/channel_collective.h"
#include "layers/internal/conv_backend.h"
#include "layers/internal/gradient_sum.h"
#include "layers/internal/pointwise.h"

namespace distconv::internal {

template <typename T>
struct ConvBackend<T, HostSpace> {
  using P = Compute<T>;  // weights, bias, gradients
  // A local convolution with its call, and with ConvImplSearch::kMeasured
  // its problem's key and what its choice measured (0 otherwise).
  struct Kernel : LocalConv<T> {
    Kernel(const ConvKernelCall& c, ConvImpl impl, std::uint64_t key,
           float time_ms)
        : LocalConv<T>(c.desc, c.src_extent, c.src_strides, c.dst_extent,
                       c.dst_strides, c.pass, impl),
          call(c),
          problem(key),
          ms(time_ms) {}
    // The heuristic's kernel, made already.
    Kernel(const ConvKernelCall& c, LocalConv<T>&& made)
        : LocalConv<T>(std::move(made)), call(c), problem(0), ms(0) {}
    ConvKernelCall call;
    std::uint64_t problem;
    float ms;
  };
  struct Context {
    Context(const Exec<HostSpace>& e, const HaloSetupOptions&,
            const GpuConvOptions&, const CpuConvOptions& c)
        : exec(e), cpu(c) {}
    Exec<HostSpace> exec;  // zero, copy: kernels/space_ops.h
    CpuConvOptions cpu;
    // Measured with no cache of the caller's: this layer's choices, so
    // that its pieces of one problem are timed once.
    KernelCache own;
    KernelCache& cache() { return cpu.cache ? *cpu.cache : own; }
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

  // The plan's implementation (16-bit pieces: heuristic_local_conv());
  // measured: the cache's, else the fastest this rank times (then in the
  // cache, so that the layer's other pieces of the problem take it).
  static std::optional<Kernel> kernel(Context& ctx,
                                      const std::optional<ConvKernelCall>& c) {
    std::optional<Kernel> out;
    if (!c) return out;
    if (ctx.cpu.search == ConvImplSearch::kHeuristic) {
      out.emplace(*c, heuristic_local_conv<T>(
                          c->desc, c->src_extent, c->src_strides, c->dst_extent,
                          c->dst_strides, c->pass, c->impl));
      return out;
    }
    const std::uint64_t key = problem_key(
        conv_problem(c->desc, c->src_extent, c->src_strides, c->dst_extent,
                     c->dst_strides, c->pass, element_name<T>()));
    KernelCache& cache = ctx.cache();
    const auto hit = cache.find_conv(key);
    cache.record_lookup(hit.has_value());
    ConvImplTiming pick;
    if (hit) {
      pick = {hit->impl, hit->ms};
    } else {
      pick = time_conv_impls<T>(c->desc, c->src_extent, c->src_strides,
                                c->dst_extent, c->dst_strides, c->pass,
                                ctx.cpu.timing);
      cache.put(key, ConvChoice{pick.impl, pick.ms});
    }
    out.emplace(*c, pick.impl, key, pick.ms);
    return out;
  }
  // Measured (collective over `comm`): for each problem, every rank runs
  // the fastest implementation any rank found for it
  // (layers/internal/algo_agreement.h), and the cache keeps it.
  static void agree(Context& ctx, MPI_Comm comm,
                    const std::vector<std::optional<Kernel>*>& kernels) {
    if (ctx.cpu.search != ConvImplSearch::kMeasured) return;
    std::vector<AlgoChoice> mine;
    std::vector<std::optional<Kernel>*> chosen;
    for (std::optional<Kernel>* k : kernels) {
      if (!*k) continue;
      mine.push_back({(*k)->problem, static_cast<std::int32_t>((*k)->impl()), 0,
                      (*k)->ms});
      chosen.push_back(k);
    }
    const std::vector<AlgoChoice> use = agree_on_algorithms(comm, mine);
    run_collectively(comm, [&] {
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        const Kernel& k = **chosen[i];
        const auto impl = static_cast<ConvImpl>(use[i].algorithm);
        if (impl != k.impl()) {
          // Copied first: emplace() destroys the kernel they belong to.
          const ConvKernelCall call = k.call;
          const std::uint64_t problem = k.problem;
          chosen[i]->emplace(call, impl, problem, use[i].ms);
        }
        if (ctx.cpu.cache) {
          ctx.cpu.cache->put(use[i].problem, ConvChoice{impl, use[i].ms});
        }
      }
    });
  }
  static void fill_bias(const Context&, const StridedView<T>& out, const P* b) {
    out.for_each([&](const Shape& i, T& v) { v = b ? T(b[i[1]]) : T(0); });
  }
  static void add_per_channel(const Context&, const StridedView<T>& v,
                              const P* values) {
    internal::add_per_channel(v, values);
  }
  static void sum_per_channel(const Context&, const StridedView<const T>& v,
                              P* sums) {
    internal::sum_per_channel(v, sums);
  }
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_HOST_CONV_BACKEND_H_
