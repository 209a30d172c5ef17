#include "layers/deconv_plan.h"

#include <sstream>
#include <utility>

#include "distconv/internal/layer_checks.h"

namespace distconv {

bool operator==(const DeconvPlan& a, const DeconvPlan& b) {
  return a.desc == b.desc && a.geometry.src_shape() == b.geometry.src_shape() &&
         a.rank == b.rank && a.window == b.window &&
         a.forward_kernel == b.forward_kernel &&
         a.data_kernel == b.data_kernel &&
         a.weights_kernel == b.weights_kernel && a.input == b.input &&
         a.search == b.search && a.frames == b.frames &&
         a.piece_kernels == b.piece_kernels;
}

std::string DeconvPlan::describe(const std::string& forward,
                                 const std::string& data,
                                 const std::string& weights) const {
  std::ostringstream out;
  out << "transposed convolution " << window.window.dst << " -> "
      << window.window.src << ": ";
  if (!forward_kernel) {
    out << "no kernel (nothing to compute here)\n";
  } else {
    out << "forward " << forward << "; backward-data " << data
        << "; backward-weights " << weights << "\n";
  }
  return out.str();
}

std::string DeconvPlan::describe() const {
  auto call = [](const std::optional<ConvKernelCall>& k) {
    std::ostringstream s;
    if (k) s << k->dst_extent << " <-> " << k->src_extent;
    return s.str();
  };
  return describe(call(forward_kernel), call(data_kernel),
                  call(weights_kernel));
}

DeconvPlan plan_deconvolution(const DeconvDesc& desc, const Distribution& src,
                              int rank, const DeconvolutionOptions& options) {
  internal::check_plan_rank(src, rank);
  internal::check_unsplit_channels(src.grid_shape(),
                                   "the transposed convolution");
  const Shape dst_shape = desc.dst_shape(src.global_shape());  // validates
  ConvGeometry geometry(desc.adjoint(), dst_shape);
  const Distribution dst = geometry.src_distribution(src);
  const HaloLayout src_layout =
      HaloLayout(src).with_storage(StorageOrder::kChannelsLast);
  HaloLayout dst_layout = chosen_layout(
      options.haloed_layout,
      geometry.src_layout(dst, src, StorageOrder::kChannelsLast), "dst");
  WindowPlan window = plan_window(geometry, dst_layout, src_layout, rank);
  DeconvPlan plan{
      desc,         std::move(geometry), rank,        std::move(window),
      std::nullopt, std::nullopt,        std::nullopt};
  const WindowPlan& w = plan.window;
  if (w.has_kernel()) {
    auto call = [&](ConvPass pass) {
      return planned_call(w.local_desc(plan.geometry.desc()),
                          w.window.src.extent, w.haloed.local_strides(rank),
                          w.window.dst.extent, w.plain.local_strides(rank),
                          pass);
    };
    plan.forward_kernel = call(ConvPass::kBackwardData);
    plan.data_kernel = call(ConvPass::kForward);
    plan.weights_kernel = call(ConvPass::kBackwardWeights);
  }
  plan.input = options.input;
  plan.search = options.cpu.search;
  if (plan.in_place()) {
    plan.frames = plan_frames(plan.geometry, w, rank);
    const Shape frame = w.haloed.local_strides(rank);
    const Shape shard = plan.frames->shard.local_strides(rank);
    const Shape plain = w.plain.local_strides(rank);
    for (const WindowPiece& c : plan.frames->pieces) {
      ConvDesc local = w.local_desc(plan.geometry.desc());
      local.padding_lower = c.window.padding_lower;
      local.padding_upper = c.window.padding_upper;
      const Shape& in = c.window.src.extent;
      const Shape& read = c.reads_frame ? frame : shard;
      const Shape written = c.reads_frame
                                ? dense_strides(in, StorageOrder::kChannelsLast)
                                : shard;
      auto call = [&](const Shape& strides, ConvPass pass) {
        return planned_call(local, in, strides, c.window.dst.extent, plain,
                            pass);
      };
      plan.piece_kernels.push_back({call(written, ConvPass::kBackwardData),
                                    call(read, ConvPass::kForward),
                                    call(read, ConvPass::kBackwardWeights)});
    }
  }
  return plan;
}

}  // namespace distconv
