// Internal: the upsampling layer, Upsample<T, Space> (layers/upsample.h),
// written once for every memory space: the passes over the interiors are
// the space's upsample_forward and upsample_backward on its execution
// context (host: kernels/local_upsample.h; GPU: kernels/cuda/space_ops.h).
//
// Included by the .cc that includes a space's calls and instantiates the
// layer for it: layers/upsample.cc (host), layers/device_upsample.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_UPSAMPLE_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_UPSAMPLE_IMPL_H_

#include <utility>

#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/upsample_geometry.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/pointwise.h"
#include "layers/upsample.h"

namespace distconv {
namespace internal {

inline ShardPlan planned_upsample(const ProcessGrid& grid,
                                  const UpsampleDesc& desc,
                                  const Distribution& src) {
  check_grid(src, grid.shape(), "upsample:");
  return plan_upsample(desc, src, grid.rank());
}

}  // namespace internal

template <typename T, typename Space>
Upsample<T, Space>::Upsample(const ProcessGrid& grid, const UpsampleDesc& desc,
                             const Distribution& src, const Exec<Space>& exec)
    : desc_(desc),
      plan_(internal::planned_upsample(grid, desc, src)),
      exec_(exec) {}

template <typename T, typename Space>
Upsample<T, Space>::Upsample(const ProcessGrid& grid, const UpsampleDesc& desc,
                             ShardPlan plan, const Exec<Space>& exec)
    : desc_(desc), plan_(std::move(plan)), exec_(exec) {
  internal::check_given_shard_plan<T, Space>(grid, plan_, [&] {
    return plan_upsample(desc_, src_distribution(), plan_.rank);
  });
}

template <typename T, typename Space>
void Upsample<T, Space>::forward(const DistTensor<T, Space>& src,
                                 DistTensor<T, Space>& dst) const {
  internal::require_distribution(src, src_distribution(), "upsample: src");
  internal::require_distribution(dst, dst_distribution(), "upsample: dst");
  upsample_forward(exec_, upsample_factors(desc_.factors), src.interior(),
                   dst.interior());
}

template <typename T, typename Space>
void Upsample<T, Space>::backward(const DistTensor<T, Space>& diff_dst,
                                  DistTensor<T, Space>& diff_src) const {
  internal::require_distribution(diff_dst, dst_distribution(),
                                 "upsample: diff_dst");
  internal::require_distribution(diff_src, src_distribution(),
                                 "upsample: diff_src");
  upsample_backward(exec_, upsample_factors(desc_.factors), diff_dst.interior(),
                    diff_src.interior());
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_UPSAMPLE_IMPL_H_
