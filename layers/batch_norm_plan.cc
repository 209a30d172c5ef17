#include "layers/batch_norm_plan.h"

#include <cmath>
#include <sstream>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"

namespace distconv {
namespace {

// Throws unless the input and the options make a batch normalisation.
void validate(const Distribution& src, const BatchNormOptions& o) {
  require(src.ndims() >= 3, ErrorKind::kInvalidArgument,
          "batch normalisation needs (N, C, spatial...) with 1 to 3 "
          "spatial dimensions, got a tensor of shape ",
          src.global_shape());
  require(std::isfinite(o.epsilon) && o.epsilon >= 0,
          ErrorKind::kInvalidArgument, "batch normalisation epsilon ",
          o.epsilon, " must be finite and >= 0");
  require(o.momentum >= 0 && o.momentum <= 1, ErrorKind::kInvalidArgument,
          "batch normalisation momentum ", o.momentum, " must be in [0, 1]");
  require(o.stats == BatchNormStats::kShard ||
              o.stats == BatchNormStats::kSampleBlock ||
              o.stats == BatchNormStats::kGlobal,
          ErrorKind::kInvalidArgument, "unknown BatchNormStats value ",
          static_cast<int>(o.stats));
  require(o.mode == BatchNormMode::kTraining ||
              o.mode == BatchNormMode::kInference,
          ErrorKind::kInvalidArgument, "unknown BatchNormMode value ",
          static_cast<int>(o.mode));
  require(o.activation == NormActivation::kNone ||
              o.activation == NormActivation::kRelu,
          ErrorKind::kInvalidArgument, "unknown NormActivation value ",
          static_cast<int>(o.activation));
}

}  // namespace

const char* to_string(BatchNormStats stats) {
  switch (stats) {
    case BatchNormStats::kShard:
      return "shard";
    case BatchNormStats::kSampleBlock:
      return "sample_block";
    case BatchNormStats::kGlobal:
      return "global";
  }
  return "?";
}

const char* to_string(BatchNormMode mode) {
  switch (mode) {
    case BatchNormMode::kTraining:
      return "training";
    case BatchNormMode::kInference:
      return "inference";
  }
  return "?";
}

const char* to_string(NormActivation act) {
  switch (act) {
    case NormActivation::kNone:
      return "none";
    case NormActivation::kRelu:
      return "relu";
  }
  return "?";
}

bool operator==(const BatchNormPlan& a, const BatchNormPlan& b) {
  return a.options.stats == b.options.stats &&
         a.options.activation == b.options.activation &&
         a.options.mode == b.options.mode &&
         a.options.epsilon == b.options.epsilon &&
         a.options.momentum == b.options.momentum && a.rank == b.rank &&
         a.layout == b.layout && a.channels == b.channels &&
         a.channel_begin == b.channel_begin &&
         a.local_channels == b.local_channels &&
         a.stats_begin == b.stats_begin && a.stats_end == b.stats_end &&
         a.elements == b.elements && a.count == b.count &&
         a.set_ranks == b.set_ranks;
}

std::string BatchNormPlan::describe() const {
  const size_t ranks = set_ranks.size();
  std::ostringstream out;
  out << "batch norm, " << to_string(options.stats) << " statistics over "
      << ranks << (ranks == 1 ? " rank" : " ranks") << " (" << count
      << " values per channel), " << to_string(options.mode);
  if (options.activation == NormActivation::kRelu) out << ", then ReLU";
  if (local_channels != channels) {
    out << ", channels " << channel_begin << ".."
        << channel_begin + local_channels << " of " << channels << " here";
  }
  return out.str();
}

BatchNormPlan plan_batch_norm(const Distribution& src, int rank,
                              const BatchNormOptions& options) {
  internal::check_plan_rank(src, rank);
  validate(src, options);
  BatchNormPlan p{options, rank,
                  HaloLayout(src).with_storage(StorageOrder::kChannelsLast)};
  const Shape& global = src.global_shape();
  p.channels = global[1];
  const Box shard = src.shard(rank);
  p.channel_begin = shard.lower[1];
  p.local_channels = shard.extent[1];
  const bool own_channels = options.stats == BatchNormStats::kShard;
  p.stats_begin = own_channels ? p.channel_begin : 0;
  p.stats_end = own_channels ? p.channel_begin + p.local_channels : p.channels;
  p.elements = shard.volume();
  Index spatial = 1;
  for (int d = 2; d < global.ndims(); ++d) spatial *= global[d];
  const Shape coord = src.part_coord(rank);
  for (int q = 0; q < src.num_parts(); ++q) {
    const bool in_set =
        options.stats == BatchNormStats::kGlobal ||
        (options.stats == BatchNormStats::kSampleBlock &&
         src.part_coord(q)[0] == coord[0]) ||
        q == rank;
    if (in_set) p.set_ranks.push_back(q);
  }
  switch (options.stats) {
    case BatchNormStats::kShard:
      p.count = p.local_channels > 0 ? p.elements / p.local_channels : 0;
      break;
    case BatchNormStats::kSampleBlock:
      // The ranks sharing this rank's N coordinate cover the whole spatial
      // extent of each channel.
      p.count = shard.extent[0] * spatial;
      break;
    case BatchNormStats::kGlobal:
      p.count = global[0] * spatial;
      break;
  }
  return p;
}

}  // namespace distconv
