// Internal: the activation layer, Activation<T, Space> (see
// layers/activation.h), written once for every memory space: the
// interiors' element-wise math is the space's activation_forward and
// activation_backward on its execution context (host:
// kernels/local_activation.h; GPU: kernels/cuda/space_ops.h).
//
// Included by the .cc that includes a space's calls and instantiates the
// layer for it: layers/activation.cc (host), layers/device_activation.cc
// (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_ACTIVATION_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_ACTIVATION_IMPL_H_

#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "layers/activation.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/pointwise.h"

namespace distconv {
namespace internal {

inline ShardPlan planned_activation(const ProcessGrid& grid,
                                    const ActivationDesc& desc,
                                    const Distribution& dist) {
  desc.validate();
  check_grid(dist, grid.shape(),
             (std::string(to_string(desc.kind)) + ":").c_str());
  return plan_activation(desc, dist, grid.rank());
}

}  // namespace internal

template <typename T, typename Space>
Activation<T, Space>::Activation(const ProcessGrid& grid,
                                 const ActivationDesc& desc,
                                 const Distribution& dist,
                                 const Exec<Space>& exec)
    : desc_(desc),
      plan_(internal::planned_activation(grid, desc, dist)),
      exec_(exec) {}

template <typename T, typename Space>
Activation<T, Space>::Activation(const ProcessGrid& grid,
                                 const ActivationDesc& desc, ShardPlan plan,
                                 const Exec<Space>& exec)
    : desc_(desc), plan_(std::move(plan)), exec_(exec) {
  internal::check_given_shard_plan<T, Space>(
      grid, plan_, [&] {
    return plan_activation(desc_, plan_.layout("src").distribution(),
                           plan_.rank);
  });
}

template <typename T, typename Space>
void Activation<T, Space>::forward(const DistTensor<T, Space>& src,
                                   DistTensor<T, Space>& dst) const {
  const std::string name = to_string(desc_.kind);
  internal::require_distribution(src, distribution(), name + ": src");
  internal::require_distribution(dst, distribution(), name + ": dst");
  activation_forward(exec_, desc_, dst.interior(), src.interior());
}

template <typename T, typename Space>
void Activation<T, Space>::backward(const DistTensor<T, Space>& src,
                                    const DistTensor<T, Space>& diff_dst,
                                    DistTensor<T, Space>& diff_src) const {
  backward_from(src, "src", diff_dst, diff_src);
}

template <typename T, typename Space>
void Activation<T, Space>::backward_from_dst(
    const DistTensor<T, Space>& dst, const DistTensor<T, Space>& diff_dst,
    DistTensor<T, Space>& diff_src) const {
  require(desc_.keeps_sign(), ErrorKind::kUnsupported, to_string(desc_.kind),
          " with negative slope ", desc_.negative_slope,
          " cannot take its gradient from its output (two inputs of "
          "either sign give the same positive output); pass the input to "
          "backward()");
  backward_from(dst, "dst", diff_dst, diff_src);
}

// The derivative depends on whether the input is > 0, which the output
// tells as well when the activation keeps signs.
template <typename T, typename Space>
void Activation<T, Space>::backward_from(
    const DistTensor<T, Space>& sign_of, const char* what,
    const DistTensor<T, Space>& diff_dst,
    DistTensor<T, Space>& diff_src) const {
  const std::string name = to_string(desc_.kind);
  internal::require_distribution(sign_of, distribution(), name + ": " + what);
  internal::require_distribution(diff_dst, distribution(),
                                 name + ": diff_dst");
  internal::require_distribution(diff_src, distribution(),
                                 name + ": diff_src");
  activation_backward(exec_, desc_, diff_src.interior(), sign_of.interior(),
                      diff_dst.interior());
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_ACTIVATION_IMPL_H_
