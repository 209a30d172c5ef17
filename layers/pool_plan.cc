#include "layers/pool_plan.h"

#include <sstream>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {

bool operator==(const PoolKernelCall& a, const PoolKernelCall& b) {
  return a.desc == b.desc && a.src_extent == b.src_extent &&
         a.src_strides == b.src_strides && a.dst_extent == b.dst_extent &&
         a.dst_strides == b.dst_strides &&
         a.diff_src_strides == b.diff_src_strides && a.impl == b.impl;
}

bool operator==(const PoolPlan& a, const PoolPlan& b) {
  return a.desc == b.desc && a.geometry.desc() == b.geometry.desc() &&
         a.geometry.src_shape() == b.geometry.src_shape() && a.rank == b.rank &&
         a.window == b.window && a.kernel == b.kernel && a.input == b.input &&
         a.impl == b.impl && a.search == b.search && a.frames == b.frames &&
         a.piece_kernels == b.piece_kernels;
}

namespace {

// kInPlace: the frames, and a local pooling per piece.
void plan_in_place(PoolPlan& p) {
  p.frames = plan_frames(p.geometry, p.window, p.rank);
  const HaloLayout& frame = p.window.haloed;
  for (const WindowPiece& c : p.frames->pieces) {
    PoolDesc local = p.window.local_desc(p.desc);
    local.padding_lower = c.window.padding_lower;
    local.padding_upper = c.window.padding_upper;
    const Shape& extent = c.window.src.extent;
    p.piece_kernels.push_back(PoolKernelCall{
        local, extent,
        (c.reads_frame ? frame : p.frames->shard).local_strides(p.rank),
        c.window.dst.extent, p.window.plain.local_strides(p.rank),
        c.reads_frame ? dense_strides(extent, StorageOrder::kChannelsLast)
                      : Shape(),
        p.impl.value_or(heuristic_pool_impl(p.desc))});
  }
}

}  // namespace

std::string PoolPlan::describe(const std::string& implementation) const {
  std::ostringstream out;
  out << to_string(desc.kind) << " pooling " << window.window.dst << ": "
      << (kernel ? implementation : std::string("no outputs")) << "\n";
  return out.str();
}

std::string PoolPlan::describe() const {
  if (!kernel) return describe("");
  std::ostringstream call;
  call << kernel->src_extent << " -> " << kernel->dst_extent;
  return describe(call.str());
}

PoolPlan plan_pooling(const PoolDesc& desc, const Distribution& src, int rank,
                      const PoolingOptions& options) {
  internal::check_plan_rank(src, rank);
  desc.validate(src.global_shape());
  require(!options.impl || options.search == ConvImplSearch::kHeuristic,
          ErrorKind::kInvalidArgument,
          "pooling: PoolingOptions asks for the implementation ",
          to_string(*options.impl),
          " and for a measured choice; ask for one of them");
  ConvGeometry geometry(desc.window_conv(src.global_shape()[1]),
                        src.global_shape());
  const Distribution dst = geometry.dst_distribution(src);
  HaloLayout src_layout = chosen_layout(
      options.haloed_layout,
      geometry.src_layout(src, dst, StorageOrder::kChannelsLast), "src");
  const HaloLayout dst_layout =
      HaloLayout(dst).with_storage(StorageOrder::kChannelsLast);
  WindowPlan window = plan_window(geometry, src_layout, dst_layout, rank);
  std::optional<PoolKernelCall> kernel;
  if (window.has_kernel()) {
    kernel = PoolKernelCall{window.local_desc(desc),
                            window.window.src.extent,
                            src_layout.local_strides(rank),
                            window.window.dst.extent,
                            dst_layout.local_strides(rank),
                            Shape(),
                            options.impl.value_or(heuristic_pool_impl(desc))};
  }
  PoolPlan plan{desc,
                std::move(geometry),
                rank,
                std::move(window),
                std::move(kernel),
                options.input,
                options.impl,
                options.search};
  if (plan.in_place()) plan_in_place(plan);
  return plan;
}

}  // namespace distconv
