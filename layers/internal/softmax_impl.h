// Internal: the softmax layer, Softmax<T, Space> (layers/softmax.h),
// written once for every memory space. The passes over the interiors run
// the space's kernel for a SoftmaxKernelCall (layers/internal/
// space_kernel.h), with the interface below: kernels/local_softmax.h in
// host memory, kernels/cuda/softmax.h on the GPU.
//
// Included by the .cc that specialises SpaceKernel for a space and
// instantiates the layer for it: layers/softmax.cc (host),
// layers/device_softmax.cc (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_SOFTMAX_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_SOFTMAX_IMPL_H_

#include <sstream>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/strided_view.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/space_kernel.h"
#include "layers/softmax.h"

namespace distconv {
namespace internal {

// A rank's softmax: over views of the shard's extent.
struct SoftmaxKernelCall {
  SoftmaxKind kind;
  Shape extent;
};

template <>
struct KernelInterface<SoftmaxKernelCall> {
  template <typename K, typename T, typename Space>
  // forward(src, dst); backward(dst, diff_dst, diff_src); what runs them
  using passes = decltype(std::declval<ForwardBackward<K, T, Space>>(),
                          std::string(std::declval<const K&>().describe()));
};

}  // namespace internal

template <typename T, typename Space>
struct Softmax<T, Space>::Impl {
  SoftmaxKind kind;
  ShardPlan plan;
  const Distribution& dist;
  const HaloLayout& layout;
  Box shard;
  internal::SpaceKernelOf<internal::SoftmaxKernelCall, T, Space> kernel;

  Impl(ShardPlan p, const SoftmaxOptions& o, const Exec<Space>& exec)
      : kind(o.kind),
        plan(std::move(p)),
        dist(plan.layout("src").distribution()),
        layout(plan.layout("src")),
        shard(plan.shard("src")),
        kernel(internal::make_kernel<T>(
            exec, internal::SoftmaxKernelCall{o.kind, shard.extent})) {}

  void check(const DistTensor<T, Space>& t, const char* what) const {
    require(t.layout().distribution() == dist, ErrorKind::kShapeMismatch, what,
            " tensor's distribution (global ", t.global_shape(), " over grid ",
            t.layout().distribution().grid_shape(),
            ") is not the softmax's (global ", dist.global_shape(),
            " over grid ", dist.grid_shape(), ", in any layout)");
  }
};

template <typename T, typename Space>
Softmax<T, Space>::Softmax(const ProcessGrid& grid, const Distribution& src,
                           const SoftmaxOptions& options,
                           const Exec<Space>& exec) {
  const Shape& shape = src.global_shape();
  require(shape.ndims() == 4 || shape.ndims() == 5, ErrorKind::kInvalidArgument,
          "softmax input shape ", shape,
          " is not (N, C, H, W) or (N, C, D, H, W)");
  internal::check_grid(src, grid.shape(), "input");
  impl_ = internal::Pimpl<Impl>::make(
      "softmax", plan_softmax(src, grid.rank(), options), options, exec);
}

template <typename T, typename Space>
Softmax<T, Space>::Softmax(const ProcessGrid& grid, ShardPlan plan,
                           const SoftmaxOptions& options,
                           const Exec<Space>& exec) {
  internal::check_given_shard_plan<T, Space>(grid, plan, [&] {
    return plan_softmax(plan.layout("src").distribution(), plan.rank, options);
  });
  impl_ =
      internal::Pimpl<Impl>::make("softmax", std::move(plan), options, exec);
}

template <typename T, typename Space>
const ShardPlan& Softmax<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
SoftmaxKind Softmax<T, Space>::kind() const {
  return impl().kind;
}
template <typename T, typename Space>
const Distribution& Softmax<T, Space>::distribution() const {
  return impl().dist;
}
template <typename T, typename Space>
const HaloLayout& Softmax<T, Space>::src_layout() const {
  return impl().layout;
}
template <typename T, typename Space>
const HaloLayout& Softmax<T, Space>::dst_layout() const {
  return impl().layout;
}
template <typename T, typename Space>
const HaloLayout& Softmax<T, Space>::diff_dst_layout() const {
  return impl().layout;
}
template <typename T, typename Space>
const HaloLayout& Softmax<T, Space>::diff_src_layout() const {
  return impl().layout;
}

template <typename T, typename Space>
void Softmax<T, Space>::forward(const DistTensor<T, Space>& src,
                                DistTensor<T, Space>& dst) {
  Impl& s = impl();
  s.check(src, "src");
  s.check(dst, "dst");
  s.kernel.forward(src.interior(), dst.interior());
}

template <typename T, typename Space>
void Softmax<T, Space>::backward(const DistTensor<T, Space>& dst,
                                 const DistTensor<T, Space>& diff_dst,
                                 DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  s.check(dst, "dst");
  s.check(diff_dst, "diff_dst");
  s.check(diff_src, "diff_src");
  s.kernel.backward(dst.interior(), diff_dst.interior(), diff_src.interior());
}

template <typename T, typename Space>
std::string Softmax<T, Space>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  out << to_string(s.kind) << " " << s.shard << ": " << s.kernel.describe()
      << "\n";
  return out.str();
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_SOFTMAX_IMPL_H_
