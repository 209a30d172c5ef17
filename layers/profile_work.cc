#include "layers/profile_work.h"

#include <optional>
#include <vector>

namespace distconv {
namespace {

double cells(const Shape& extent) {
  return static_cast<double>(extent.volume());
}

// A kernel call's FLOPs and the bytes of its input, output and weights
// (fp32).
void add_call(const std::optional<ConvKernelCall>& call, double element,
              ProfileWork& w) {
  if (!call) return;
  w.flops += call->flops();
  w.bytes += element * (cells(call->src_extent) + cells(call->dst_extent));
  const ConvDesc& d = call->desc;
  w.bytes += 4.0 * cells(d.weights_shape());
}

ProfileWork pieces_work(const std::vector<const std::vector<ConvPiece>*>& all,
                        double element) {
  ProfileWork w;
  for (const auto* pieces : all) {
    for (const ConvPiece& p : *pieces) add_call(p.kernel, element, w);
  }
  return w;
}

// The passes of a layer with no parameters: forward and its one backward.
bool computes_input_side(ProfilePass pass) {
  return pass == ProfilePass::kForward || pass == ProfilePass::kBackwardData ||
         pass == ProfilePass::kBackward ||
         pass == ProfilePass::kForwardBackward;
}

}  // namespace

ProfileWork profile_work(const ConvPlan& plan, ProfilePass pass,
                         double element) {
  switch (pass) {
    case ProfilePass::kForward:
      return pieces_work({&plan.forward_early, &plan.forward_late}, element);
    case ProfilePass::kBackwardData:
      return pieces_work({&plan.data_early, &plan.data_late}, element);
    case ProfilePass::kBackwardWeights:
      return pieces_work({&plan.weights_early, &plan.weights_late}, element);
    case ProfilePass::kBackward:
      return pieces_work({&plan.data_early, &plan.data_late,
                          &plan.weights_early, &plan.weights_late},
                         element);
    default:
      return {};
  }
}

ProfileWork profile_work(const DeconvPlan& plan, ProfilePass pass,
                         double element) {
  ProfileWork w;
  switch (pass) {
    case ProfilePass::kForward:
      add_call(plan.forward_kernel, element, w);
      break;
    case ProfilePass::kBackwardData:
      add_call(plan.data_kernel, element, w);
      break;
    case ProfilePass::kBackwardWeights:
      add_call(plan.weights_kernel, element, w);
      break;
    case ProfilePass::kBackward:
      add_call(plan.data_kernel, element, w);
      add_call(plan.weights_kernel, element, w);
      break;
    default:
      break;
  }
  return w;
}

ProfileWork profile_work(const PoolPlan& plan, ProfilePass pass,
                         double element) {
  ProfileWork w;
  if (!plan.kernel || !computes_input_side(pass)) return w;
  const double out = cells(plan.kernel->dst_extent);
  w.flops = out * cells(plan.desc.kernel);
  w.bytes = element * (cells(plan.kernel->src_extent) + out);
  return w;
}

ProfileWork profile_work(const BatchNormPlan& plan, ProfilePass pass,
                         double element) {
  const double n = static_cast<double>(plan.elements);
  ProfileWork w;
  if (pass == ProfilePass::kForward) {
    w.flops = 5 * n;
    w.bytes = 3 * n * element;
  } else if (pass == ProfilePass::kBackwardData ||
             pass == ProfilePass::kBackward) {
    w.flops = 8 * n;
    w.bytes = 5 * n * element;
  }
  return w;
}

ProfileWork profile_work(const ShardPlan& plan, ProfilePass pass,
                         double element) {
  ProfileWork w;
  if (!computes_input_side(pass)) return w;
  double all = 0, out = 0;
  for (const ShardTensor& t : plan.tensors) {
    const double c = cells(t.layout.shard(plan.rank).extent);
    all += c;
    out = c;  // outputs come last
  }
  for (const ShardTensor& t : plan.tensors) {
    if (t.name == "dst") out = cells(t.layout.shard(plan.rank).extent);
  }
  // Forward and backward in one call count both passes' operations, but
  // move the bytes of one backward pass.
  w.flops = pass == ProfilePass::kForwardBackward ? 2 * out : out;
  w.bytes = element * (pass == ProfilePass::kForward ? all : all + out);
  return w;
}

}  // namespace distconv
