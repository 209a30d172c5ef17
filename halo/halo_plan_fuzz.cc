// Fuzz target: the distribution, halo layout and halo plan math on layouts
// drawn from the input: 2-4 dimensions, up to 3 parts per dimension with
// any sizes (empty parts included), per-part halo widths up to 3, open or
// periodic boundaries. Properties, for every part:
//  * the shards tile the global box exactly (each cell owned once);
//  * every halo cell with a source (inside the tensor, or wrapped across a
//    periodic boundary) is received exactly once, from its owner; no other
//    cell is received;
//  * the reverse exchange is the transpose of the forward one: each
//    receive of r from p is a send of p to r with the same tag, over the
//    same global cells (the reverse moves the one back along the other);
//  * halo_receives() is make_halo_plan()'s receives; packed offsets add up.
// A layout the library refuses with distconv::Error is not a finding; an
// Error from the plan of a layout it accepted is.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "halo/halo_plan.h"
#include "tests/fuzz_input.h"
#include "tests/layout_cases.h"

namespace distconv {
namespace {

using testing::FuzzInput;
using testing::source_of;

HaloLayout layout_of(FuzzInput& in) {
  const int ndims = static_cast<int>(in.pick(2, 4));
  std::vector<BlockPartition> partitions;
  std::vector<Boundary> boundaries;
  for (int d = 0; d < ndims; ++d) {
    std::vector<Index> sizes(static_cast<size_t>(in.pick(1, 3)));
    for (Index& s : sizes) s = in.pick(0, 5);
    partitions.push_back(BlockPartition::from_sizes(sizes));
    boundaries.push_back(in.pick(0, 1) ? Boundary::kPeriodic : Boundary::kOpen);
  }
  const Distribution dist(partitions);
  std::vector<HaloWidths> widths(static_cast<size_t>(dist.num_parts()));
  const bool same = in.pick(0, 1);
  for (size_t p = 0; p < widths.size(); ++p) {
    if (same && p > 0) {
      widths[p] = widths[0];
      continue;
    }
    widths[p] = HaloWidths::none(ndims);
    for (int d = 0; d < ndims; ++d) {
      widths[p].lower[d] = in.pick(0, 3);
      widths[p].upper[d] = in.pick(0, 3);
    }
  }
  return HaloLayout(dist, widths, boundaries);
}

void check_tiling(const Distribution& dist) {
  const Shape& global = dist.global_shape();
  std::vector<int> owned(static_cast<size_t>(global.volume()), 0);
  for (int p = 0; p < dist.num_parts(); ++p) {
    const Box shard = dist.shard(p);
    for (Index i = 0; i < shard.volume(); ++i) {
      const Shape cell = shard.lower + unravel(i, shard.extent);
      DISTCONV_FUZZ_CHECK(
          Box({Shape::filled(global.ndims(), 0), global}).contains(cell));
      ++owned[static_cast<size_t>(linear_index(cell, global))];
    }
  }
  for (const int n : owned) DISTCONV_FUZZ_CHECK(n == 1);
}

void check_plans(const HaloLayout& layout) {
  const Distribution& dist = layout.distribution();
  std::vector<HaloPlan> plans;
  for (int p = 0; p < layout.num_parts(); ++p) {
    plans.push_back(make_halo_plan(layout, p));
    DISTCONV_FUZZ_CHECK(plans.back().part == p);
    DISTCONV_FUZZ_CHECK(halo_receives(layout, p) == plans.back().recvs);
  }
  for (int r = 0; r < layout.num_parts(); ++r) {
    const HaloPlan& plan = plans[r];
    const Box buffer = layout.buffer_box(r);
    const Shape& local = buffer.extent;
    const Box whole{Shape::filled(local.ndims(), 0), local};
    std::vector<int> received(static_cast<size_t>(local.volume()), 0);
    for (const HaloMessage& m : plan.recvs) {
      DISTCONV_FUZZ_CHECK(!m.local.empty() && whole.contains(m.local));
      DISTCONV_FUZZ_CHECK(m.peer >= 0 && m.peer < layout.num_parts());
      for (Index i = 0; i < m.local.volume(); ++i) {
        const Shape cell = m.local.lower + unravel(i, m.local.extent);
        DISTCONV_FUZZ_CHECK(!layout.interior(r).contains(cell));
        const auto src = source_of(layout, cell + buffer.lower);
        DISTCONV_FUZZ_CHECK(src.has_value());
        DISTCONV_FUZZ_CHECK(dist.part_index(dist.owner(*src)) == m.peer);
        ++received[static_cast<size_t>(linear_index(cell, local))];
      }
      // The matching send: the same cells, in the peer's coordinates.
      const auto first = *source_of(layout, m.local.lower + buffer.lower);
      const Box expected{first - layout.buffer_box(m.peer).lower,
                         m.local.extent};
      int matches = 0;
      for (const HaloMessage& s : plans[m.peer].sends) {
        if (s.peer != r || s.tag != m.tag) continue;
        ++matches;
        DISTCONV_FUZZ_CHECK(s.local == expected);
      }
      DISTCONV_FUZZ_CHECK(matches == 1);
    }
    // Exactly the halo cells with a source are received, each once.
    for (Index i = 0; i < local.volume(); ++i) {
      const Shape cell = unravel(i, local);
      const bool halo = !layout.interior(r).contains(cell);
      const bool sourced = source_of(layout, cell + buffer.lower).has_value();
      DISTCONV_FUZZ_CHECK(received[static_cast<size_t>(i)] ==
                          (halo && sourced ? 1 : 0));
    }
    const std::vector<Index> offsets = packed_offsets(plan.recvs);
    DISTCONV_FUZZ_CHECK(offsets.size() == plan.recvs.size() + 1);
    DISTCONV_FUZZ_CHECK(offsets.back() == plan.recv_volume());
  }
  // Every send is some receive's match.
  Index sends = 0, recvs = 0;
  for (const HaloPlan& plan : plans) {
    sends += static_cast<Index>(plan.sends.size());
    recvs += static_cast<Index>(plan.recvs.size());
  }
  DISTCONV_FUZZ_CHECK(sends == recvs);
}

}  // namespace
}  // namespace distconv

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  distconv::testing::FuzzInput in(data, size);
  std::optional<distconv::HaloLayout> layout;
  try {
    layout.emplace(distconv::layout_of(in));
  } catch (const distconv::Error&) {
    return 0;  // a layout the library refuses, with a message
  }
  // A layout once made must plan: an Error from here on is a finding.
  distconv::check_tiling(layout->distribution());
  distconv::check_plans(*layout);
  return 0;
}
