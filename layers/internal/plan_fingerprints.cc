#include "layers/internal/plan_fingerprints.h"

#include <string>

namespace distconv::internal {

namespace {

Fingerprint typed(const std::string& object, const char* element,
                  const char* space) {
  Fingerprint f(object);
  f.add("element type", element).add("memory space", space);
  return f;
}

template <typename Desc>
void add_window(Fingerprint& f, const Desc& desc) {
  f.add("input channels", desc.in_channels)
      .add("output channels", desc.out_channels)
      .add("groups", desc.groups)
      .add("kernel", desc.kernel)
      .add("stride", desc.stride)
      .add("dilation", desc.dilation)
      .add("lower padding", desc.padding_lower)
      .add("upper padding", desc.padding_upper)
      .add("bias", desc.bias == ConvBias::kAdd);
}

// "zeros, circular": the padding mode of each spatial dimension.
template <typename Desc>
std::string padding_modes(const Desc& desc) {
  std::string out;
  for (int j = 0; j < desc.spatial_dims(); ++j) {
    out += std::string(j > 0 ? ", " : "") +
           to_string(desc.circular(j) ? PaddingMode::kCircular
                                      : PaddingMode::kZeros);
  }
  return out;
}

// What the plan does with split channels: the scheme its full-channel
// tensors amount to, and the channel group.
std::string channel_scheme(const ConvPlan& plan) {
  if (!plan.channels.split) return "none";
  const bool x = plan.x_full.has_value(), y = plan.y_full.has_value();
  const char* scheme = x && y ? "stationary_weights"
                       : x    ? "stationary_output"
                       : y    ? "stationary_input"
                              : "own groups";
  return std::string(scheme) + " over " + std::to_string(plan.channels.pc) +
         "x" + std::to_string(plan.channels.pf);
}

// Where a layer's passes read their haloed tensor.
const char* reads(ConvInput input) {
  return input == ConvInput::kInPlace ? "in place" : "a buffer with halos";
}

}  // namespace

Fingerprint fingerprint(const ConvPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("convolution", element, space);
  f.add("input", plan.src_layout.distribution());
  add_window(f, plan.desc());
  f.add("padding mode", padding_modes(plan.desc()))
      .add("overlap", plan.overlap == ConvOverlap::kInteriorFirst
                          ? "interior first"
                          : "none")
      .add("halo transport", to_string(plan.transport))
      .add("channel scheme", channel_scheme(plan))
      .add("reads", reads(plan.input))
      .add("kernel choice", to_string(plan.search));
  return f.add("input layout", plan.src_layout);
}

Fingerprint fingerprint(const DeconvPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("transposed convolution", element, space);
  f.add("input", plan.src_layout().distribution());
  add_window(f, plan.desc);
  f.add("output padding", plan.desc.output_padding)
      .add("padding mode", padding_modes(plan.desc))
      .add("reads", reads(plan.input))
      .add("kernel choice", to_string(plan.search));
  return f.add("output layout", plan.dst_layout());
}

Fingerprint fingerprint(const PoolPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("pooling", element, space);
  f.add("input", plan.src_layout().distribution())
      .add("kind", to_string(plan.desc.kind))
      .add("kernel", plan.desc.kernel)
      .add("stride", plan.desc.stride)
      .add("lower padding", plan.desc.padding_lower)
      .add("upper padding", plan.desc.padding_upper)
      .add("padding mode", padding_modes(plan.desc))
      .add("reads", reads(plan.input))
      .add("kernel choice",
           plan.impl ? to_string(*plan.impl) : to_string(plan.search));
  return f.add("input layout", plan.src_layout());
}

Fingerprint fingerprint(const BatchNormPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("batch normalisation", element, space);
  return f.add("input", plan.layout.distribution())
      .add("statistics", to_string(plan.options.stats))
      .add("mode", to_string(plan.options.mode))
      .add("epsilon", plan.options.epsilon)
      .add("momentum", plan.options.momentum)
      .add("activation", to_string(plan.options.activation))
      .add("layout", plan.layout);
}

Fingerprint fingerprint(const GroupNormPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("group normalisation", element, space);
  return f.add("input", plan.layout.distribution())
      .add("groups", plan.options.groups)
      .add("running statistics", plan.options.running == RunningStats::kTrack)
      .add("mode", to_string(plan.options.mode))
      .add("epsilon", plan.options.epsilon)
      .add("momentum", plan.options.momentum)
      .add("layout", plan.layout);
}

Fingerprint fingerprint(const InterpolatePlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("linear interpolation", element, space);
  f.add("input", plan.src_layout.distribution())
      .add("size", plan.desc.size)
      .add("align corners", plan.desc.align_corners == AlignCorners::kYes)
      .add("scales", static_cast<int>(plan.desc.scales.size()))
      .add("reads", reads(plan.input));
  for (size_t d = 0; d < plan.desc.scales.size(); ++d) {
    f.add("scale " + std::to_string(d), plan.desc.scales[d]);
  }
  return f.add("layout", plan.src_layout);
}

Fingerprint fingerprint(const AdaptivePoolPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed("adaptive pooling", element, space);
  return f.add("input", plan.src_layout.distribution())
      .add("kind", to_string(plan.desc.kind))
      .add("size", plan.desc.size)
      .add("layout", plan.src_layout);
}

Fingerprint fingerprint(const ShardPlan& plan, const char* element,
                        const char* space) {
  Fingerprint f = typed(plan.layer, element, space);
  f.add("tensors", static_cast<int>(plan.tensors.size()));
  for (const ShardTensor& t : plan.tensors) f.add(t.name, t.layout);
  return f;
}

}  // namespace distconv::internal
