#include "distconv/halo_layout.h"

#include <algorithm>
#include <utility>

#include "distconv/error.h"

namespace distconv {
namespace {

// First dimension that may carry a halo: N and C never do.
int first_spatial_dim(int ndims) { return ndims >= 3 ? 2 : 0; }

void validate_widths(const Distribution& dist, const HaloWidths& w, int part) {
  const Shape& global = dist.global_shape();
  require(w.lower.ndims() == dist.ndims() && w.upper.ndims() == dist.ndims(),
          ErrorKind::kShapeMismatch, "halo widths ", w.lower, " / ", w.upper,
          " of part ", part, " do not match tensor shape ", global);
  for (int d = 0; d < dist.ndims(); ++d) {
    for (Index x : {w.lower[d], w.upper[d]}) {
      require(x >= 0, ErrorKind::kInvalidArgument, "halo width ", x,
              " in dimension ", d, " of part ", part, " is negative");
      require(x == 0 || d >= first_spatial_dim(dist.ndims()),
              ErrorKind::kInvalidArgument, "halo width ", x,
              " in dimension ", d, " of part ", part,
              ": only spatial dimensions (2 and up) carry halos");
      require(x <= global[d], ErrorKind::kInvalidArgument, "halo width ", x,
              " in dimension ", d, " of part ", part,
              " exceeds the tensor extent ", global[d]);
    }
  }
}

std::vector<Boundary> validate_boundaries(const Distribution& dist,
                                          std::vector<Boundary> b) {
  if (b.empty()) b.assign(dist.ndims(), Boundary::kOpen);
  require(static_cast<int>(b.size()) == dist.ndims(),
          ErrorKind::kShapeMismatch, b.size(),
          " boundary conditions given for a tensor of shape ",
          dist.global_shape());
  for (int d = 0; d < first_spatial_dim(dist.ndims()); ++d) {
    require(b[d] == Boundary::kOpen, ErrorKind::kInvalidArgument,
            "dimension ", d, " is not spatial and cannot be periodic");
  }
  return b;
}

}  // namespace

HaloWidths HaloWidths::none(int ndims) {
  return {Shape::filled(ndims, 0), Shape::filled(ndims, 0)};
}

HaloWidths HaloWidths::symmetric(const Shape& widths) {
  return {widths, widths};
}

HaloLayout::HaloLayout(const Distribution& dist)
    : HaloLayout(dist, HaloWidths::none(dist.ndims())) {}

HaloLayout::HaloLayout(const Distribution& dist, const HaloWidths& widths,
                       std::vector<Boundary> boundaries)
    : HaloLayout(dist, std::vector<HaloWidths>(dist.num_parts(), widths),
                 std::move(boundaries)) {}

HaloLayout::HaloLayout(const Distribution& dist,
                       std::vector<HaloWidths> per_part,
                       std::vector<Boundary> boundaries)
    : dist_(dist),
      widths_(std::move(per_part)),
      boundaries_(validate_boundaries(dist, std::move(boundaries))) {
  require(static_cast<int>(widths_.size()) == dist_.num_parts(),
          ErrorKind::kShapeMismatch, widths_.size(),
          " halo widths given for a grid of ", dist_.num_parts(), " parts (",
          dist_.grid_shape(), ")");
  for (int p = 0; p < dist_.num_parts(); ++p) {
    validate_widths(dist_, widths_[p], p);
    const Box shard = dist_.shard(p);
    bool unused = shard.empty();  // without halos the buffer would be empty
    for (int d = first_spatial_dim(ndims()); d < ndims(); ++d) {
      if (shard.extent[d] == 0) unused = false;
    }
    for (int d = 0; d < first_spatial_dim(ndims()); ++d) {
      if (shard.extent[d] == 0) unused = true;
    }
    if (unused) widths_[p] = HaloWidths::none(dist_.ndims());
  }
}

const HaloWidths& HaloLayout::widths(int part) const {
  require(part >= 0 && part < num_parts(), ErrorKind::kInvalidArgument,
          "part ", part, " outside [0, ", num_parts(), ")");
  return widths_[part];
}

Box HaloLayout::buffer_box(int part) const {
  const HaloWidths& w = widths(part);
  return shard(part).expanded(w.lower, w.upper);
}

Shape HaloLayout::local_shape(int part) const {
  return buffer_box(part).extent;
}

Box HaloLayout::interior(int part) const {
  return {widths(part).lower, shard(part).extent};
}

Box HaloLayout::halo_slab(int part, int dim, Side side) const {
  require(dim >= 0 && dim < ndims(), ErrorKind::kInvalidArgument, "dimension ",
          dim, " outside [0, ", ndims(), ")");
  Box slab{Shape::filled(ndims(), 0), local_shape(part)};
  const HaloWidths& w = widths(part);
  if (side == Side::kLower) {
    slab.extent[dim] = w.lower[dim];
  } else {
    slab.lower[dim] = w.lower[dim] + shard(part).extent[dim];
    slab.extent[dim] = w.upper[dim];
  }
  return slab;
}

HaloLayout HaloLayout::with_storage(StorageOrder order) const {
  require(order == StorageOrder::kChannelsFirst || ndims() >= 3,
          ErrorKind::kInvalidArgument,
          "channels-last storage needs (N, C, spatial...) dimensions, got ",
          dist_.global_shape());
  HaloLayout copy = *this;
  copy.storage_ = order;
  return copy;
}

Shape HaloLayout::to_storage(const Shape& logical) const {
  if (storage_ == StorageOrder::kChannelsFirst) return logical;
  // (N, C, s0, s1, ...) -> (N, s0, s1, ..., C)
  Shape out = logical;
  for (int d = 1; d + 1 < logical.ndims(); ++d) out[d] = logical[d + 1];
  out[logical.ndims() - 1] = logical[1];
  return out;
}

Shape HaloLayout::local_strides(int part) const {
  return dense_strides(local_shape(part), storage_);
}

Shape dense_strides(const Shape& extent, StorageOrder order) {
  if (order == StorageOrder::kChannelsFirst || extent.ndims() < 3) {
    return row_major_strides(extent);
  }
  // Row-major over (N, s0, s1, ..., C), read back in logical order.
  const int n = extent.ndims();
  Shape out = Shape::filled(n, 0);
  Index step = 1;
  out[1] = step;
  step *= extent[1];
  for (int d = n - 1; d >= 2; --d) {
    out[d] = step;
    step *= extent[d];
  }
  out[0] = step;
  return out;
}

bool is_dense(const Shape& extent, const Shape& strides, StorageOrder order,
              int from) {
  const Shape want = dense_strides(extent, order);
  for (int d = from; d < extent.ndims(); ++d) {
    if (extent[d] > 1 && strides[d] != want[d]) return false;
  }
  return true;
}

Index strided_span(const Shape& extent, const Shape& strides) {
  Index last = 0;
  for (int d = 0; d < extent.ndims(); ++d) {
    if (extent[d] == 0) return 0;
    last += (extent[d] - 1) * strides[d];
  }
  return last + 1;
}

namespace {

bool same_frame(const HaloLayout& a, const HaloLayout& b) {
  if (a.distribution() != b.distribution() ||
      a.storage_order() != b.storage_order()) {
    return false;
  }
  for (int d = 0; d < a.ndims(); ++d) {
    if (a.boundary(d) != b.boundary(d)) return false;
  }
  return true;
}

}  // namespace

HaloLayout widest(const HaloLayout& a, const HaloLayout& b) {
  require(same_frame(a, b), ErrorKind::kShapeMismatch,
          "halo layouts of ", a.distribution().global_shape(), " over grid ",
          a.distribution().grid_shape(), " and of ",
          b.distribution().global_shape(), " over grid ",
          b.distribution().grid_shape(),
          " differ in distribution, boundaries or storage order");
  std::vector<HaloWidths> widths;
  std::vector<Boundary> boundaries;
  for (int d = 0; d < a.ndims(); ++d) boundaries.push_back(a.boundary(d));
  for (int p = 0; p < a.num_parts(); ++p) {
    HaloWidths w = a.widths(p);
    for (int d = 0; d < a.ndims(); ++d) {
      w.lower[d] = std::max(w.lower[d], b.widths(p).lower[d]);
      w.upper[d] = std::max(w.upper[d], b.widths(p).upper[d]);
    }
    widths.push_back(w);
  }
  return HaloLayout(a.distribution(), std::move(widths), boundaries)
      .with_storage(a.storage_order());
}

bool covers(const HaloLayout& layout, const HaloLayout& need) {
  if (!same_frame(layout, need)) return false;
  for (int p = 0; p < need.num_parts(); ++p) {
    for (int d = 0; d < need.ndims(); ++d) {
      if (layout.widths(p).lower[d] < need.widths(p).lower[d] ||
          layout.widths(p).upper[d] < need.widths(p).upper[d]) {
        return false;
      }
    }
  }
  return true;
}

HaloLayout chosen_layout(const std::optional<HaloLayout>& given,
                         const HaloLayout& need, const char* what) {
  if (!given) return need;
  require(covers(*given, need), ErrorKind::kInvalidArgument, "the ", what,
          " layout given in the options (global ",
          given->distribution().global_shape(), " over grid ",
          given->distribution().grid_shape(),
          ") does not cover the halos the layer needs: it must have the "
          "same distribution, boundaries and storage order, and at least "
          "the widths of the layer's own layout on every part (build it "
          "with widest())");
  return *given;
}

}  // namespace distconv
