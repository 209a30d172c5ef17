#include "layers/group_norm_plan.h"

#include <cmath>
#include <sstream>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {
namespace {

void validate(const Distribution& src, const GroupNormOptions& o) {
  const Shape& global = src.global_shape();
  require(src.ndims() >= 3, ErrorKind::kInvalidArgument,
          "group normalisation needs (N, C, spatial...) with 1 to 3 "
          "spatial dimensions, got a tensor of shape ",
          global);
  require(o.groups >= 1 && global[1] % o.groups == 0,
          ErrorKind::kInvalidArgument, "group normalisation of ", global[1],
          " channels in ", o.groups, " groups: the groups must divide the "
          "channels");
  require(std::isfinite(o.epsilon) && o.epsilon >= 0,
          ErrorKind::kInvalidArgument, "group normalisation epsilon ",
          o.epsilon, " must be finite and >= 0");
  require(o.momentum >= 0 && o.momentum <= 1, ErrorKind::kInvalidArgument,
          "group normalisation momentum ", o.momentum, " must be in [0, 1]");
  require(o.running == RunningStats::kNone ||
              (o.running == RunningStats::kTrack && o.groups == global[1]),
          ErrorKind::kInvalidArgument, "running statistics are kept per "
          "channel: with RunningStats::kTrack the groups (", o.groups,
          ") must be the channels (", global[1], "), as in InstanceNorm");
  require(o.mode == BatchNormMode::kTraining ||
              (o.mode == BatchNormMode::kInference &&
               o.running == RunningStats::kTrack),
          ErrorKind::kInvalidArgument, "group normalisation in inference "
          "uses running statistics: set RunningStats::kTrack (or keep "
          "kTraining, the statistics of each sample)");
  const Index size = global[1] / o.groups;
  const BlockPartition& c = src.partition(1);
  for (int p = 0; p < c.parts(); ++p) {
    require(c.begin(p) % size == 0, ErrorKind::kUnsupported,
            "group normalisation splits channels only between groups: "
            "channel part ", p, " starts at channel ", c.begin(p),
            ", inside a group of ", size, " channels");
  }
}

}  // namespace

bool operator==(const GroupNormPlan& a, const GroupNormPlan& b) {
  return a.options.groups == b.options.groups &&
         a.options.epsilon == b.options.epsilon &&
         a.options.running == b.options.running &&
         a.options.momentum == b.options.momentum &&
         a.options.mode == b.options.mode && a.rank == b.rank &&
         a.layout == b.layout && a.channels == b.channels &&
         a.group_size == b.group_size && a.channel_begin == b.channel_begin &&
         a.local_channels == b.local_channels &&
         a.group_begin == b.group_begin && a.local_groups == b.local_groups &&
         a.samples == b.samples && a.count == b.count &&
         a.spatial == b.spatial && a.batch == b.batch &&
         a.set_ranks == b.set_ranks;
}

std::string GroupNormPlan::describe() const {
  const size_t ranks = set_ranks.size();
  std::ostringstream out;
  out << "group norm, " << options.groups << " groups of " << group_size
      << (group_size == 1 ? " channel" : " channels") << " over " << ranks
      << (ranks == 1 ? " rank" : " ranks") << " (" << count
      << " values per sample and group), " << to_string(options.mode);
  if (options.running == RunningStats::kTrack) out << ", running statistics";
  if (local_channels != channels) {
    out << ", channels " << channel_begin << ".."
        << channel_begin + local_channels << " of " << channels << " here";
  }
  return out.str();
}

GroupNormPlan plan_group_norm(const Distribution& src, int rank,
                              const GroupNormOptions& options) {
  internal::check_plan_rank(src, rank);
  validate(src, options);
  GroupNormPlan p{options, rank,
                  HaloLayout(src).with_storage(StorageOrder::kChannelsLast)};
  const Shape& global = src.global_shape();
  p.channels = global[1];
  p.group_size = global[1] / options.groups;
  const Box shard = src.shard(rank);
  p.channel_begin = shard.lower[1];
  p.local_channels = shard.extent[1];
  p.group_begin = p.channel_begin / p.group_size;
  p.local_groups = p.local_channels / p.group_size;
  p.samples = shard.extent[0];
  p.batch = global[0];
  p.spatial = 1;
  for (int d = 2; d < global.ndims(); ++d) p.spatial *= global[d];
  p.count = p.group_size * p.spatial;
  p.set_ranks = src.parts_sharing(rank, {0, 1});
  return p;
}

}  // namespace distconv
