// The pooling layer in host memory (Pooling<T>): LocalPool kernels (oneDNN,
// reference loops), chosen by measurement where the plan asks. The
// executor itself is layers/internal/pooling_impl.h.
#include "layers/pooling.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/internal/agreement.h"
#include "kernels/gpu_algo_cache.h"
#include "kernels/kernel_cache.h"
#include "kernels/local_pool.h"
#include "kernels/pool_impl_search.h"
#include "layers/internal/algo_agreement.h"
#include "layers/internal/pointwise.h"
#include "layers/internal/pooling_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct SpaceKernel<PoolKernelCall, T, HostSpace> {
  using type = LocalPool<T>;
  static type make(const Exec<HostSpace>&, const PoolKernelCall& k) {
    return type(k.desc, k.src_extent, k.src_strides, k.dst_extent,
                k.dst_strides, k.diff_src_strides, k.impl);
  }
};

// Each kernel call's choice from the options' cache, else its candidates
// timed (once per problem on this rank); then, for each problem, the
// fastest any rank found, which the cache keeps.
template <typename T>
void choose_pool_impls(MPI_Comm comm, PoolPlan& plan,
                       const PoolImplSearchOptions& timing) {
  std::vector<PoolKernelCall*> calls;
  if (plan.kernel) calls.push_back(&*plan.kernel);
  for (PoolKernelCall& k : plan.piece_kernels) calls.push_back(&k);
  std::vector<AlgoChoice> mine;
  run_collectively(comm, [&] {
    std::map<std::uint64_t, PoolImplTiming> found;
    for (const PoolKernelCall* k : calls) {
      const std::uint64_t key = problem_key(
          pool_problem(k->desc, k->src_extent, k->src_strides, k->dst_extent,
                       k->dst_strides, k->diff_src_strides, element_name<T>()));
      auto it = found.find(key);
      if (it == found.end()) {
        PoolImplTiming pick;
        const std::optional<PoolChoice> hit =
            timing.cache ? timing.cache->find_pool(key) : std::nullopt;
        if (timing.cache) timing.cache->record_lookup(hit.has_value());
        if (hit) {
          pick = {hit->impl, hit->ms};
        } else {
          pick = time_pool_impls<T>(k->desc, k->src_extent, k->src_strides,
                                    k->dst_extent, k->dst_strides,
                                    k->diff_src_strides, timing);
        }
        it = found.emplace(key, pick).first;
      }
      mine.push_back(
          {key, static_cast<std::int32_t>(it->second.impl), 0, it->second.ms});
    }
  });
  const std::vector<AlgoChoice> use = agree_on_algorithms(comm, mine);
  for (size_t i = 0; i < calls.size(); ++i) {
    calls[i]->impl = static_cast<PoolImpl>(use[i].algorithm);
    if (timing.cache) {
      timing.cache->put(use[i].problem, PoolChoice{calls[i]->impl, use[i].ms});
    }
  }
}

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Pooling<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
