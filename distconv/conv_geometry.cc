#include "distconv/conv_geometry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {
namespace {

Index floor_div(Index a, Index b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
Index ceil_div(Index a, Index b) { return -floor_div(-a, b); }

// One spatial dimension of the convolution.
struct Axis {
  Index in;    // I
  Index out;   // O
  Index stride;
  Index pad;   // lower padding
  Index span;  // (k - 1) * dilation + 1
  // The cells a window may read: [0, I) with zero padding, [-pad, I +
  // upper padding) with circular padding (the cells past the ends are
  // halos filled from the other end).
  Index first, last;

  // Inputs output range [o0, o1) reads, before clipping to [first, last).
  std::pair<Index, Index> reads(Index o0, Index o1) const {
    return {o0 * stride - pad, (o1 - 1) * stride - pad + span};
  }
  Index clip(Index i) const { return std::clamp(i, first, last); }
  // Outputs that read some of input range [i0, i1), clipped to [0, O).
  std::pair<Index, Index> read_by(Index i0, Index i1) const {
    return {std::max<Index>(0, ceil_div(i0 + pad - span + 1, stride)),
            std::min(out, floor_div(i1 - 1 + pad, stride) + 1)};
  }
};

Axis axis(const ConvGeometry& g, int j) {
  const ConvDesc& c = g.desc();
  const Index in = g.src_shape()[j + 2];
  const bool wraps = c.circular(j);
  return {in,
          g.dst_shape()[j + 2],
          c.stride[j],
          c.padding_lower[j],
          (c.kernel[j] - 1) * c.dilation[j] + 1,
          wraps ? -c.padding_lower[j] : 0,
          wraps ? in + c.padding_upper[j] : in};
}

// The largest sub-range [a, b) of [lo, hi) where inside(x) holds, given
// that it holds on one interval (possibly empty).
template <typename Pred>
std::pair<Index, Index> interval_where(Index lo, Index hi, Pred inside) {
  Index a = lo;
  while (a < hi && !inside(a)) ++a;
  Index b = a;
  while (b < hi && inside(b)) ++b;
  return {a, b};
}

// Splits `box` into `inner` (narrowed spatially to ranges[j]) and the
// slabs around it, peeling one spatial dimension at a time.
BoxSplit onion(const Box& box,
               const std::vector<std::pair<Index, Index>>& ranges) {
  BoxSplit split;
  if (box.empty()) {
    split.interior = split.core = box;
    return split;
  }
  Box rest = box;
  for (size_t j = 0; j < ranges.size(); ++j) {
    const int d = static_cast<int>(j) + 2;
    const Index lo = rest.lower[d], hi = rest.lower[d] + rest.extent[d];
    const Index a = std::clamp(ranges[j].first, lo, hi);
    const Index b = std::clamp(ranges[j].second, a, hi);
    Box below = rest, above = rest;
    below.extent[d] = a - lo;
    above.lower[d] = b;
    above.extent[d] = hi - b;
    if (!below.empty()) split.boundary.push_back(below);
    if (!above.empty()) split.boundary.push_back(above);
    rest.lower[d] = a;
    rest.extent[d] = b - a;
    if (j == 0) split.core = rest;
  }
  split.interior = rest;
  if (rest.empty()) split.interior.extent = Shape::filled(box.ndims(), 0);
  return split;
}

Box empty_box(int ndims) {
  return {Shape::filled(ndims, 0), Shape::filled(ndims, 0)};
}

// `box` with every channel of a tensor of `shape`: a part's halos depend
// on its samples and spatial cells, not on which channels it holds.
Box all_channels(Box box, const Shape& shape) {
  box.lower[1] = 0;
  box.extent[1] = shape[1];
  return box;
}

}  // namespace

ConvGeometry::ConvGeometry(const ConvDesc& desc, const Shape& src_shape)
    : desc_(desc), src_shape_(src_shape), dst_shape_(desc.dst_shape(src_shape)) {}

ConvWindow ConvGeometry::forward_window(const Box& dst) const {
  const int k = desc_.spatial_dims();
  ConvWindow w{empty_box(k + 2), dst, Shape::filled(k, 0),
               Shape::filled(k, 0)};
  if (dst.empty()) {
    w.dst = empty_box(k + 2);
    return w;
  }
  w.src.lower[0] = dst.lower[0];
  w.src.extent[0] = dst.extent[0];
  w.src.lower[1] = channelwise() ? dst.lower[1] : 0;
  w.src.extent[1] = channelwise() ? dst.extent[1] : src_shape_[1];
  for (int j = 0; j < k; ++j) {
    const Axis a = axis(*this, j);
    const auto [need_lo, need_hi] =
        a.reads(dst.lower[j + 2], dst.lower[j + 2] + dst.extent[j + 2]);
    const Index lo = a.clip(need_lo);
    const Index hi = std::max(lo, a.clip(need_hi));
    w.src.lower[j + 2] = lo;
    w.src.extent[j + 2] = hi - lo;
    w.padding_lower[j] = lo - need_lo;
    w.padding_upper[j] = need_hi - hi;
    if (hi == lo) {  // the outputs read padding only
      w.padding_lower[j] = need_hi - need_lo;
      w.padding_upper[j] = 0;
    }
  }
  return w;
}

ConvWindow ConvGeometry::backward_data_window(const Box& src) const {
  const int k = desc_.spatial_dims();
  ConvWindow w{src, empty_box(k + 2), Shape::filled(k, 0),
               Shape::filled(k, 0)};
  if (src.empty()) {
    w.src = empty_box(k + 2);
    return w;
  }
  w.dst.lower[0] = src.lower[0];
  w.dst.extent[0] = src.extent[0];
  if (channelwise()) {  // each channel's gradient reads its own outputs
    w.dst.lower[1] = src.lower[1];
    w.dst.extent[1] = src.extent[1];
  } else {
    w.dst.extent[1] = dst_shape_[1];
    w.src.lower[1] = 0;
    w.src.extent[1] = src_shape_[1];
  }
  for (int j = 0; j < k; ++j) {
    const Axis a = axis(*this, j);
    const Index i0 = src.lower[j + 2], i1 = i0 + src.extent[j + 2];
    const auto [oa, ob] = a.read_by(i0, i1);
    if (oa >= ob) {  // no output reads these inputs: zero gradient
      return {empty_box(k + 2), empty_box(k + 2), Shape::filled(k, 0),
              Shape::filled(k, 0)};
    }
    const auto [need_lo, need_hi] = a.reads(oa, ob);
    const Index c0 = std::max(i0, need_lo), c1 = std::min(i1, need_hi);
    w.dst.lower[j + 2] = oa;
    w.dst.extent[j + 2] = ob - oa;
    w.src.lower[j + 2] = c0;
    w.src.extent[j + 2] = c1 - c0;
    w.padding_lower[j] = c0 - need_lo;
    w.padding_upper[j] = need_hi - c1;
  }
  return w;
}

namespace {

// A partition of [0, extent) lined up with `from`: parts before the first
// non-empty part of `from` start at 0, parts after the last one at
// `extent`, the others at begin(from's begin), clamped to [0, extent).
template <typename Begin>
BlockPartition lined_up(const BlockPartition& from, Index extent,
                        Begin begin) {
  const int n = from.parts();
  int first = n, last = -1;
  for (int p = 0; p < n; ++p) {
    if (from.size(p) > 0) {
      first = std::min(first, p);
      last = p;
    }
  }
  std::vector<Index> cut(n + 1), sizes(n);
  for (int p = 0; p <= n; ++p) {
    if (p <= first) {
      cut[p] = 0;
    } else if (p > last) {
      cut[p] = extent;
    } else {
      cut[p] = std::clamp<Index>(begin(from.begin(p)), 0, extent);
    }
  }
  cut[n] = extent;
  for (int p = 0; p < n; ++p) sizes[p] = cut[p + 1] - cut[p];
  return BlockPartition::from_sizes(sizes);
}

}  // namespace

bool ConvGeometry::channelwise() const {
  return desc_.groups == desc_.in_channels &&
         desc_.in_channels == desc_.out_channels;
}

namespace {

// Whether every part of `channels` holds whole groups of `per_group`.
bool whole_groups(const BlockPartition& channels, Index per_group) {
  for (int p = 0; p < channels.parts(); ++p) {
    if (channels.begin(p) % per_group != 0) return false;
  }
  return true;
}

ChannelSplit split_of(const BlockPartition& channels, Index groups) {
  if (channels.parts() == 1) return ChannelSplit::kNone;
  if (whole_groups(channels, channels.extent() / groups)) {
    return ChannelSplit::kWholeGroups;
  }
  if (groups == 1) return ChannelSplit::kInsideGroups;
  std::string sizes;
  for (int p = 0; p < channels.parts(); ++p) {
    sizes += (p > 0 ? ", " : "") + std::to_string(channels.size(p));
  }
  throw Error(ErrorKind::kUnsupported,
              "a grouped convolution (" + std::to_string(groups) +
                  " groups of " + std::to_string(channels.extent() / groups) +
                  " channels) splits channels only between groups; the "
                  "channel parts {" +
                  sizes + "} cut a group");
}

}  // namespace

ChannelSplit ConvGeometry::channel_split(const Distribution& src) const {
  return split_of(src.partition(1), desc_.groups);
}

BlockPartition ConvGeometry::channel_partition(const Distribution& d,
                                               Index channels) const {
  const BlockPartition& from = d.partition(1);
  switch (split_of(from, desc_.groups)) {
    case ChannelSplit::kNone:
      return BlockPartition::balanced(channels, 1);
    case ChannelSplit::kWholeGroups: {
      const Index from_group = from.extent() / desc_.groups;
      const Index to_group = channels / desc_.groups;
      std::vector<Index> sizes;
      for (int p = 0; p < from.parts(); ++p) {
        sizes.push_back(from.size(p) / from_group * to_group);
      }
      return BlockPartition::from_sizes(sizes);
    }
    case ChannelSplit::kInsideGroups:
      break;
  }
  return BlockPartition::balanced(channels, from.parts());
}

Distribution ConvGeometry::dst_distribution(const Distribution& src) const {
  require(src.global_shape() == src_shape_, ErrorKind::kShapeMismatch,
          "input distribution of shape ", src.global_shape(),
          " given to a convolution planned for ", src_shape_);
  std::vector<BlockPartition> parts;
  parts.push_back(src.partition(0));
  parts.push_back(channel_partition(src, dst_shape_[1]));
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    const Axis a = axis(*this, j);
    // Output o belongs to the part owning the centre of its window,
    // o * stride - pad + (span - 1) / 2.
    const Index centre = (a.span - 1) / 2;
    parts.push_back(lined_up(src.partition(j + 2), a.out, [&](Index i) {
      return ceil_div(i + a.pad - centre, a.stride);
    }));
  }
  return Distribution(std::move(parts));
}

Distribution ConvGeometry::src_distribution(const Distribution& dst) const {
  require(dst.global_shape() == dst_shape_, ErrorKind::kShapeMismatch,
          "output distribution of shape ", dst.global_shape(),
          " given to a convolution whose output is ", dst_shape_);
  std::vector<BlockPartition> parts;
  parts.push_back(dst.partition(0));
  parts.push_back(channel_partition(dst, src_shape_[1]));
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    const Axis a = axis(*this, j);
    // A part's inputs start at the centre of its first output's window.
    const Index centre = (a.span - 1) / 2;
    parts.push_back(lined_up(dst.partition(j + 2), a.in, [&](Index o) {
      return o * a.stride - a.pad + centre;
    }));
  }
  return Distribution(std::move(parts));
}

std::vector<Boundary> ConvGeometry::src_boundaries() const {
  std::vector<Boundary> b(src_shape_.ndims(), Boundary::kOpen);
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    if (desc_.circular(j)) b[j + 2] = Boundary::kPeriodic;
  }
  return b;
}

Box ConvGeometry::diff_src_box(const Distribution& src, int part) const {
  Box box = src.shard(part);
  // A part without channels computes partial sums for the parts of its
  // channel group that have them: it extends its cells alike.
  if (all_channels(box, src_shape_).empty()) return box;
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    const Axis a = axis(*this, j);
    const int d = j + 2;
    if (box.lower[d] == 0) {
      box.lower[d] = a.first;
      box.extent[d] -= a.first;
    }
    if (box.upper()[d] == a.in) box.extent[d] = a.last - box.lower[d];
  }
  return box;
}

HaloLayout ConvGeometry::diff_src_layout(const Distribution& src,
                                         StorageOrder order) const {
  const int n = src.ndims();
  std::vector<HaloWidths> widths(src.num_parts(), HaloWidths::none(n));
  for (int p = 0; p < src.num_parts(); ++p) {
    const Box shard = src.shard(p), box = diff_src_box(src, p);
    for (int d = 2; d < n; ++d) {
      widths[p].lower[d] = shard.lower[d] - box.lower[d];
      widths[p].upper[d] = box.upper()[d] - shard.upper()[d];
    }
  }
  return HaloLayout(src, std::move(widths), src_boundaries())
      .with_storage(order);
}

HaloLayout ConvGeometry::src_layout(const Distribution& src,
                                    const Distribution& dst,
                                    StorageOrder order) const {
  const int n = src.ndims();
  std::vector<HaloWidths> widths(src.num_parts(), HaloWidths::none(n));
  for (int p = 0; p < src.num_parts(); ++p) {
    const ConvWindow w = forward_window(all_channels(dst.shard(p), dst_shape_));
    if (w.dst.empty() || w.src.empty()) continue;
    const Box shard = src.shard(p);
    for (int d = 2; d < n; ++d) {
      widths[p].lower[d] = std::max<Index>(0, shard.lower[d] - w.src.lower[d]);
      widths[p].upper[d] =
          std::max<Index>(0, w.src.upper()[d] - shard.upper()[d]);
    }
  }
  return HaloLayout(src, std::move(widths), src_boundaries())
      .with_storage(order);
}

HaloLayout ConvGeometry::diff_dst_layout(const Distribution& src,
                                         const Distribution& dst,
                                         StorageOrder order) const {
  const int n = dst.ndims();
  std::vector<HaloWidths> widths(dst.num_parts(), HaloWidths::none(n));
  for (int p = 0; p < dst.num_parts(); ++p) {
    const ConvWindow w =
        backward_data_window(all_channels(diff_src_box(src, p), src_shape_));
    if (w.dst.empty()) continue;
    const Box shard = dst.shard(p);
    for (int d = 2; d < n; ++d) {
      widths[p].lower[d] = std::max<Index>(0, shard.lower[d] - w.dst.lower[d]);
      widths[p].upper[d] =
          std::max<Index>(0, w.dst.upper()[d] - shard.upper()[d]);
    }
  }
  return HaloLayout(dst, std::move(widths)).with_storage(order);
}

BoxSplit ConvGeometry::split_forward(const Box& dst,
                                     const Box& src_shard) const {
  std::vector<std::pair<Index, Index>> ranges;
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    const Axis a = axis(*this, j);
    const Index s0 = src_shard.lower[j + 2], s1 = src_shard.upper()[j + 2];
    const Index o0 = dst.lower[j + 2], o1 = o0 + dst.extent[j + 2];
    ranges.push_back(interval_where(o0, o1, [&](Index o) {
      const auto [lo, hi] = a.reads(o, o + 1);
      const Index c0 = a.clip(lo);
      const Index c1 = std::max(c0, a.clip(hi));
      return c0 == c1 || (s0 <= c0 && c1 <= s1);
    }));
  }
  return onion(dst, ranges);
}

BoxSplit ConvGeometry::split_backward_data(const Box& src,
                                           const Box& dst_shard) const {
  std::vector<std::pair<Index, Index>> ranges;
  for (int j = 0; j < desc_.spatial_dims(); ++j) {
    const Axis a = axis(*this, j);
    const Index d0 = dst_shard.lower[j + 2], d1 = dst_shard.upper()[j + 2];
    const Index i0 = src.lower[j + 2], i1 = i0 + src.extent[j + 2];
    ranges.push_back(interval_where(i0, i1, [&](Index i) {
      const auto [oa, ob] = a.read_by(i, i + 1);
      return oa >= ob || (d0 <= oa && ob <= d1);
    }));
  }
  return onion(src, ranges);
}

}  // namespace distconv
