// What a layer's pass computes and moves on this rank, read from its plan,
// for a Profile (layers/profile.h); and `profiled` for a layer, which also
// takes the time the pass was blocked on communication from the layer's
// stats().
//
//   profiled(profile, "enc1.conv", ProfilePass::kForward, conv,
//            [&] { conv.forward(x, w, nullptr, y); });
//
// How work is counted (2 FLOPs per multiply-add; bytes: every cell of the
// tensors the kernels read or write, once):
//   - convolution: each pass's pieces' kernel FLOPs (ConvKernelCall::
//     flops) and the cells of their inputs and outputs, plus the weights
//     (fp32) they read or write; the transposed convolution alike;
//   - pooling: one operation per window tap of each output cell, input and
//     output cells, both passes;
//   - batch norm: forward 2 reads of x and 1 write of y, 5 operations per
//     cell (statistics, then the normalisation); backward 2 reads of x and
//     dy and 1 write of dx, 8 per cell;
//   - the element-wise layers (ShardPlan: activation, concat, add,
//     upsample, softmax, loss, ...): every tensor of the plan once, one
//     operation per output cell; backward the output gradient as well.
// The ProfilePass of a pass: the layer's input gradient is kBackwardData
// (a layer with one backward pass), its parameters' gradients
// kBackwardWeights, and wait_gradients() a second call of it
// (profiled_wait: its time and allreduce wait, no more work).
#ifndef DISTCONV_LAYERS_PROFILE_WORK_H_
#define DISTCONV_LAYERS_PROFILE_WORK_H_

#include <string>
#include <type_traits>
#include <utility>

#include "layers/batch_norm_plan.h"
#include "layers/conv_plan.h"
#include "layers/deconv_plan.h"
#include "layers/layer_stats.h"
#include "layers/pool_plan.h"
#include "layers/profile.h"
#include "layers/shard_plan.h"

namespace distconv {

// The work of a pass of a plan; `element`: bytes per tensor cell.
ProfileWork profile_work(const ConvPlan& plan, ProfilePass pass,
                         double element);
ProfileWork profile_work(const DeconvPlan& plan, ProfilePass pass,
                         double element);
ProfileWork profile_work(const PoolPlan& plan, ProfilePass pass,
                         double element);
ProfileWork profile_work(const BatchNormPlan& plan, ProfilePass pass,
                         double element);
ProfileWork profile_work(const ShardPlan& plan, ProfilePass pass,
                         double element);

namespace internal {

template <typename T>
struct ElementOf;
template <template <typename, typename> class Layer, typename T, typename Space>
struct ElementOf<Layer<T, Space>> {
  using type = T;
};

template <typename Layer, typename = void>
struct HasStats : std::false_type {};
template <typename Layer>
struct HasStats<Layer,
                std::void_t<decltype(std::declval<const Layer&>().stats())>>
    : std::true_type {};

template <typename Layer>
LayerStats stats_of(const Layer& layer) {
  if constexpr (HasStats<Layer>::value) {
    return layer.stats();
  } else {
    return {};
  }
}

}  // namespace internal

namespace internal {

// fn() timed into `profile` as (name, pass) doing `work`, with the
// layer's waits meanwhile.
template <typename Layer, typename Fn>
void time_layer(Profile& profile, const std::string& name, ProfilePass pass,
                const Layer& layer, const ProfileWork& work, Fn&& fn) {
  const LayerStats before = stats_of(layer);
  const double start = profile.stamp();
  std::forward<Fn>(fn)();
  const double seconds = profile.stamp() - start;
  const LayerStats after = stats_of(layer);
  LayerStats waits;
  waits.halo_wait_s = after.halo_wait_s - before.halo_wait_s;
  waits.allreduce_wait_s = after.allreduce_wait_s - before.allreduce_wait_s;
  waits.channel_s = after.channel_s - before.channel_s;
  profile.add(name, pass, seconds, work, waits);
}

}  // namespace internal

// A layer's pass (Convolution, Deconvolution, Pooling, BatchNorm or any
// layer planned by a ShardPlan, in any memory space): fn() bare when
// `profile` is null, else timed, with the layer's work and waits.
template <typename Layer, typename Fn>
void profiled(Profile* profile, const std::string& name, ProfilePass pass,
              const Layer& layer, Fn&& fn) {
  if (profile == nullptr) {
    std::forward<Fn>(fn)();
    return;
  }
  using T = typename internal::ElementOf<Layer>::type;
  internal::time_layer(*profile, name, pass, layer,
                       profile_work(layer.plan(), pass, sizeof(T)),
                       std::forward<Fn>(fn));
}

// A layer's wait_gradients() (fn), counted as one more call of its
// kBackwardWeights pass: its time and the layer's allreduce wait, no work
// (backward_weights() counted that).
template <typename Layer, typename Fn>
void profiled_wait(Profile* profile, const std::string& name,
                   const Layer& layer, Fn&& fn) {
  if (profile == nullptr) {
    std::forward<Fn>(fn)();
    return;
  }
  internal::time_layer(*profile, name, ProfilePass::kBackwardWeights, layer, {},
                       std::forward<Fn>(fn));
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_PROFILE_WORK_H_
