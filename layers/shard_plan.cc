#include "layers/shard_plan.h"

#include <sstream>
#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {
namespace {

HaloLayout plain_layout(const Distribution& dist) {
  return HaloLayout(dist).with_storage(StorageOrder::kChannelsLast);
}

ShardTensor tensor_of(std::string name, const Distribution& dist) {
  return {std::move(name), plain_layout(dist)};
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

void check_nc_spatial(const Distribution& dist, const std::string& what) {
  require(dist.ndims() >= 3 && dist.ndims() <= 5, ErrorKind::kShapeMismatch,
          what, ": tensor shape ", dist.global_shape(),
          " is not (N, C, spatial...) with 1 to 3 spatial dimensions");
}

// A distribution whose partitions are usable by concat and slice.
void check_channel_source(const Distribution& dist, const std::string& what) {
  check_nc_spatial(dist, what);
  require(dist.grid_shape()[1] == 1, ErrorKind::kUnsupported, what,
          ": the grid ", dist.grid_shape(),
          " splits channels; concatenation and slicing support splits of N "
          "and spatial dimensions only");
}

// The ranks whose coordinates equal `rank`'s in every dimension `same`
// says (ascending).
template <typename Same>
std::vector<int> ranks_where(const Distribution& dist, int rank, Same same) {
  const Shape mine = dist.part_coord(rank);
  std::vector<int> out;
  for (int q = 0; q < dist.num_parts(); ++q) {
    const Shape theirs = dist.part_coord(q);
    bool in = true;
    for (int d = 0; d < mine.ndims() && in; ++d) {
      in = !same(d) || theirs[d] == mine[d];
    }
    if (in) out.push_back(q);
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const std::vector<int>& ranks) {
  out << "{";
  for (size_t i = 0; i < ranks.size(); ++i) {
    out << (i ? ", " : "") << ranks[i];
  }
  return out << "}";
}

}  // namespace

bool operator==(const ShardTensor& a, const ShardTensor& b) {
  return a.name == b.name && a.layout == b.layout;
}

bool operator==(const ShardReduction& a, const ShardReduction& b) {
  return a.pass == b.pass && a.what == b.what && a.ranks == b.ranks &&
         a.values == b.values;
}

bool operator==(const ShardPlan& a, const ShardPlan& b) {
  return a.layer == b.layer && a.rank == b.rank && a.tensors == b.tensors &&
         a.reductions == b.reductions;
}

const ShardTensor& ShardPlan::tensor(std::string_view name) const {
  for (const ShardTensor& t : tensors) {
    if (t.name == name) return t;
  }
  std::string names;
  for (const ShardTensor& t : tensors)
    names += (names.empty() ? "" : ", ") + t.name;
  throw Error(ErrorKind::kInvalidArgument,
              internal::str("the ", layer, " plan has no tensor \"", name,
                            "\" (it has ", names, ")"));
}

bool ShardPlan::communicates() const {
  for (const ShardReduction& r : reductions) {
    if (r.ranks.size() > 1) return true;
  }
  return false;
}

std::string ShardPlan::describe() const {
  std::ostringstream out;
  out << layer << " on rank " << rank << ":";
  for (size_t i = 0; i < tensors.size(); ++i) {
    out << (i ? ", " : " ") << tensors[i].name << " " << shard(tensors[i].name);
  }
  out << "\n";
  for (const ShardReduction& r : reductions) {
    out << "  " << r.pass << ": sum of " << r.values << " values (" << r.what
        << ") over ranks " << r.ranks << "\n";
  }
  return out.str();
}

ShardPlan plan_activation(const ActivationDesc& desc, const Distribution& dist,
                          int rank) {
  desc.validate();
  const std::string name = to_string(desc.kind);
  check_nc_spatial(dist, name);
  internal::check_plan_rank(dist, rank);
  return {name, rank, {tensor_of("src", dist), tensor_of("dst", dist)}, {}};
}

ShardPlan plan_concat(const std::vector<Distribution>& srcs, int rank) {
  require(!srcs.empty(), ErrorKind::kInvalidArgument,
          "concat: needs at least one input");
  ShardPlan p{"concat", rank, {}, {}};
  Index channels = 0;
  for (size_t i = 0; i < srcs.size(); ++i) {
    const std::string what = "concat: input " + std::to_string(i);
    check_channel_source(srcs[i], what);
    bool same = srcs[i].ndims() == srcs[0].ndims();
    for (int d = 0; same && d < srcs[0].ndims(); ++d) {
      same = d == 1 || srcs[i].partition(d) == srcs[0].partition(d);
    }
    require(same, ErrorKind::kShapeMismatch, what, " (", srcs[i].describe(),
            ") is not split like input 0 (", srcs[0].describe(),
            ") in N and the spatial dimensions");
    channels += srcs[i].global_shape()[1];
  }
  internal::check_plan_rank(srcs[0], rank);
  for (size_t i = 0; i < srcs.size(); ++i) {
    p.tensors.push_back(tensor_of("src" + std::to_string(i), srcs[i]));
  }
  p.tensors.push_back(tensor_of("dst", with_channels(srcs[0], channels)));
  return p;
}

std::vector<Index> concat_offsets(const ShardPlan& concat) {
  std::vector<Index> offsets = {0};
  for (size_t i = 0; i + 1 < concat.tensors.size(); ++i) {
    offsets.push_back(
        offsets.back() +
        concat.tensors[i].layout.distribution().global_shape()[1]);
  }
  return offsets;
}

ShardPlan plan_slice(const ChannelRange& range, const Distribution& src,
                     int rank) {
  check_channel_source(src, "slice");
  const Index channels = src.global_shape()[1];
  require(0 <= range.begin && range.begin <= range.end && range.end <= channels,
          ErrorKind::kInvalidArgument, "slice: channel range [", range.begin,
          ", ", range.end, ") outside the input's channels [0, ", channels,
          ")");
  internal::check_plan_rank(src, rank);
  return {"slice",
          rank,
          {tensor_of("src", src),
           tensor_of("dst", with_channels(src, range.size()))},
          {}};
}

ShardPlan plan_upsample(const UpsampleDesc& desc, const Distribution& src,
                        int rank) {
  desc.validate(src.global_shape());
  internal::check_plan_rank(src, rank);
  return {"upsample",
          rank,
          {tensor_of("src", src), tensor_of("dst", desc.dst_distribution(src))},
          {}};
}

ShardPlan plan_softmax(const Distribution& src, int rank,
                       const SoftmaxOptions& options) {
  const Shape& shape = src.global_shape();
  require(shape.ndims() == 4 || shape.ndims() == 5, ErrorKind::kInvalidArgument,
          "softmax input shape ", shape,
          " is not (N, C, H, W) or (N, C, D, H, W)");
  require(shape[1] >= 1, ErrorKind::kInvalidArgument, "softmax input shape ",
          shape, " must have at least one channel");
  internal::check_unsplit_channels(src.grid_shape(), "softmax");
  require(options.kind == SoftmaxKind::kSoftmax ||
              options.kind == SoftmaxKind::kLogSoftmax,
          ErrorKind::kInvalidArgument, "unknown softmax kind ",
          static_cast<int>(options.kind));
  internal::check_plan_rank(src, rank);
  return {to_string(options.kind),
          rank,
          {tensor_of("src", src), tensor_of("dst", src)},
          {}};
}

ShardPlan plan_loss(const LossDesc& desc, const Distribution& prediction,
                    int rank) {
  desc.validate(prediction.global_shape());
  internal::check_unsplit_channels(prediction.grid_shape(), "the loss");
  internal::check_plan_rank(prediction, rank);
  const Distribution target =
      desc.takes_indices() ? with_channels(prediction, 1) : prediction;
  ShardPlan p{
      "loss",
      rank,
      {tensor_of("prediction", prediction), tensor_of("target", target)},
      {}};
  const Index samples = prediction.shard(rank).extent[0];
  // Forward: each sample's sums and counts (and the bad indices) over the
  // ranks holding its samples, then the totals over the sample blocks.
  p.reductions.push_back(
      {"forward", "per-sample sums and counts, bad indices",
       ranks_where(prediction, rank, [](int d) { return d == 0; }),
       2 * samples + 1});
  p.reductions.push_back(
      {"forward", "totals over the sample blocks",
       ranks_where(prediction, rank, [](int d) { return d != 0; }), 3});
  if (desc.takes_indices()) {
    // Backward's mean divides by the counted cells, which only the data
    // tell.
    p.reductions.push_back(
        {"backward", "counted cells and bad indices",
         ranks_where(prediction, rank, [](int) { return false; }), 2});
  }
  return p;
}

}  // namespace distconv
