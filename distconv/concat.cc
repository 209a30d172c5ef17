#include "distconv/concat.h"

#include <string>

#include "distconv/error.h"
#include "distconv/internal/pointwise.h"

namespace distconv {
namespace {

using internal::describe;
using internal::require_distribution;

// A distribution whose partitions are usable by concat and slice.
void check_source(const ProcessGrid& grid, const Distribution& dist,
                  const std::string& what) {
  require(dist.grid_shape() == grid.shape(), ErrorKind::kGridMismatch, what,
          ": distribution over grid ", dist.grid_shape(),
          " used with a process grid ", grid.shape());
  require(dist.ndims() >= 3 && dist.ndims() <= 5, ErrorKind::kShapeMismatch,
          what, ": tensor shape ", dist.global_shape(),
          " is not (N, C, spatial...) with 1 to 3 spatial dimensions");
  require(dist.grid_shape()[1] == 1, ErrorKind::kUnsupported, what,
          ": the grid ", dist.grid_shape(),
          " splits channels; concatenation and slicing support splits of N "
          "and spatial dimensions only");
}

// `dist` with `channels` channels, whole on one part.
Distribution with_channels(const Distribution& dist, Index channels) {
  std::vector<BlockPartition> parts;
  for (int d = 0; d < dist.ndims(); ++d) {
    parts.push_back(d == 1 ? BlockPartition::balanced(channels, 1)
                           : dist.partition(d));
  }
  return Distribution(std::move(parts));
}

HaloLayout plain_layout(const Distribution& dist) {
  return HaloLayout(dist).with_storage(StorageOrder::kChannelsLast);
}

// Channels [c0, c0 + count) of a view (N, C, spatial...).
template <typename V>
V channel_view(const V& v, Index c0, Index count) {
  Box box{Shape::filled(v.ndims(), 0), v.extent()};
  box.lower[1] = c0;
  box.extent[1] = count;
  return v.subview(box);
}

// Validates the inputs of a concatenation; returns where each one's
// channels start in the output, and the output's channel count last.
std::vector<Index> concat_offsets(const ProcessGrid& grid,
                                  const std::vector<Distribution>& srcs) {
  require(!srcs.empty(), ErrorKind::kInvalidArgument,
          "concat: needs at least one input");
  std::vector<Index> offsets = {0};
  for (size_t i = 0; i < srcs.size(); ++i) {
    const std::string what = "concat: input " + std::to_string(i);
    check_source(grid, srcs[i], what);
    bool same = srcs[i].ndims() == srcs[0].ndims();
    for (int d = 0; same && d < srcs[0].ndims(); ++d) {
      same = d == 1 || srcs[i].partition(d) == srcs[0].partition(d);
    }
    require(same, ErrorKind::kShapeMismatch, what, " (", describe(srcs[i]),
            ") is not split like input 0 (", describe(srcs[0]),
            ") in N and the spatial dimensions");
    offsets.push_back(offsets.back() + srcs[i].global_shape()[1]);
  }
  return offsets;
}

}  // namespace

template <typename T>
Concat<T>::Concat(const ProcessGrid& grid,
                  const std::vector<Distribution>& srcs)
    : srcs_(srcs),
      offsets_(concat_offsets(grid, srcs)),
      dst_layout_(plain_layout(with_channels(srcs[0], offsets_.back()))) {}

template <typename T>
const Distribution& Concat<T>::src_distribution(int i) const {
  require(i >= 0 && i < num_srcs(), ErrorKind::kInvalidArgument,
          "concat: input ", i, " outside [0, ", num_srcs(), ")");
  return srcs_[i];
}

template <typename T>
ChannelRange Concat<T>::channels(int i) const {
  src_distribution(i);  // checks i
  return {offsets_[i], offsets_[i + 1]};
}

template <typename T>
HaloLayout Concat<T>::src_layout(int i) const {
  return plain_layout(src_distribution(i));
}

template <typename T>
void Concat<T>::forward(const std::vector<const DistTensor<T>*>& srcs,
                        DistTensor<T>& dst) const {
  require(static_cast<int>(srcs.size()) == num_srcs(),
          ErrorKind::kInvalidArgument, "concat: planned for ", num_srcs(),
          " inputs, forward got ", srcs.size());
  for (int i = 0; i < num_srcs(); ++i) {
    require(srcs[i] != nullptr, ErrorKind::kInvalidArgument,
            "concat: input ", i, " is null");
    require_distribution(*srcs[i], srcs_[i],
                         "concat: input " + std::to_string(i));
  }
  require_distribution(dst, dst_distribution(), "concat: dst");
  for (int i = 0; i < num_srcs(); ++i) {
    const ChannelRange c = channels(i);
    internal::copy(srcs[i]->interior(),
                   channel_view(dst.interior(), c.begin, c.size()));
  }
}

template <typename T>
void Concat<T>::backward(const DistTensor<T>& diff_dst,
                         const std::vector<DistTensor<T>*>& diff_srcs) const {
  require(static_cast<int>(diff_srcs.size()) == num_srcs(),
          ErrorKind::kInvalidArgument, "concat: planned for ", num_srcs(),
          " inputs, backward got ", diff_srcs.size(), " gradients");
  require_distribution(diff_dst, dst_distribution(), "concat: diff_dst");
  for (int i = 0; i < num_srcs(); ++i) {
    require(diff_srcs[i] != nullptr, ErrorKind::kInvalidArgument,
            "concat: input gradient ", i, " is null");
    require_distribution(*diff_srcs[i], srcs_[i],
                         "concat: input gradient " + std::to_string(i));
  }
  for (int i = 0; i < num_srcs(); ++i) {
    const ChannelRange c = channels(i);
    internal::copy(channel_view(diff_dst.interior(), c.begin, c.size()),
                   diff_srcs[i]->interior());
  }
}

namespace {

const Distribution& checked_slice_source(const ProcessGrid& grid,
                                         const ChannelRange& range,
                                         const Distribution& src) {
  check_source(grid, src, "slice");
  const Index channels = src.global_shape()[1];
  require(0 <= range.begin && range.begin <= range.end &&
              range.end <= channels,
          ErrorKind::kInvalidArgument, "slice: channel range [", range.begin,
          ", ", range.end, ") outside the input's channels [0, ", channels,
          ")");
  return src;
}

}  // namespace

template <typename T>
Slice<T>::Slice(const ProcessGrid& grid, const ChannelRange& range,
                const Distribution& src)
    : range_(range),
      src_layout_(plain_layout(checked_slice_source(grid, range, src))),
      dst_layout_(plain_layout(with_channels(src, range.size()))) {}

template <typename T>
void Slice<T>::forward(const DistTensor<T>& src, DistTensor<T>& dst) const {
  require_distribution(src, src_distribution(), "slice: src");
  require_distribution(dst, dst_distribution(), "slice: dst");
  internal::copy(channel_view(src.interior(), range_.begin, range_.size()),
                 dst.interior());
}

template <typename T>
void Slice<T>::backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_src,
                        OtherChannels other) const {
  require(other == OtherChannels::kZero || other == OtherChannels::kKeep,
          ErrorKind::kInvalidArgument, "slice: unknown OtherChannels value ",
          static_cast<int>(other));
  require_distribution(diff_dst, dst_distribution(), "slice: diff_dst");
  require_distribution(diff_src, src_distribution(), "slice: diff_src");
  const StridedView<T> dx = diff_src.interior();
  if (other == OtherChannels::kZero) {
    const Index channels = src_distribution().global_shape()[1];
    internal::zero(channel_view(dx, 0, range_.begin));
    internal::zero(channel_view(dx, range_.end, channels - range_.end));
  }
  internal::copy(diff_dst.interior(),
                 channel_view(dx, range_.begin, range_.size()));
}

template class Concat<float>;
template class Concat<double>;
template class Slice<float>;
template class Slice<double>;

}  // namespace distconv
