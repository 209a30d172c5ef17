#include "layers/redistribute.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "layers/internal/redistribute_impl.h"

namespace distconv {
namespace {

using internal::check_mpi;

Index volume_of(const std::vector<RedistributionMessage>& messages) {
  Index v = 0;
  for (const RedistributionMessage& m : messages) v += m.box.volume();
  return v;
}

}  // namespace

namespace internal {

std::vector<Index> message_offsets(
    const std::vector<RedistributionMessage>& messages) {
  std::vector<Index> off{0};
  for (const RedistributionMessage& m : messages) {
    off.push_back(off.back() + m.box.volume());
  }
  return off;
}

// MPI_Comm_compare is local, and every rank reaches the same verdict: ranks
// sharing a source communicator also share their destination communicator
// whenever the two hold the same ranks.
void require_same_ranks(const ProcessGrid& src, const ProcessGrid& dst) {
  int result = MPI_UNEQUAL;
  check_mpi(MPI_Comm_compare(src.comm(), dst.comm(), &result),
            "MPI_Comm_compare");
  require(result != MPI_SIMILAR, ErrorKind::kGridMismatch,
          "redistribution: the destination grid holds the source grid's "
          "ranks in another order; make both grids from one communicator");
  require(result == MPI_IDENT || result == MPI_CONGRUENT,
          ErrorKind::kGridMismatch,
          "redistribution: the destination grid is over other ranks than "
          "the source grid; both must be over the same ranks in the same "
          "order");
}

void require_int_counts(MPI_Comm comm, const RedistributionPlan& plan) {
  long long biggest = 0;
  for (const auto* list : {&plan.sends, &plan.recvs}) {
    for (const RedistributionMessage& m : *list) {
      biggest = std::max<long long>(biggest, m.box.volume());
    }
  }
  long long most = 0;
  check_mpi(MPI_Allreduce(&biggest, &most, 1, MPI_LONG_LONG, MPI_MAX, comm),
            "MPI_Allreduce");
  require(most <= INT_MAX, ErrorKind::kUnsupported,
          "redistribution: a message of ", most,
          " elements exceeds MPI's count limit of ", INT_MAX);
}

}  // namespace internal

Index RedistributionPlan::send_volume() const { return volume_of(sends); }
Index RedistributionPlan::recv_volume() const { return volume_of(recvs); }

RedistributionPlan plan_redistribution(const Distribution& from,
                                       const Distribution& to, int part) {
  require(from.global_shape() == to.global_shape(), ErrorKind::kShapeMismatch,
          "redistribution between tensors of different global shapes: ",
          from.global_shape(), " and ", to.global_shape());
  require(from.num_parts() == to.num_parts(), ErrorKind::kGridMismatch,
          "redistribution between grids of different sizes: ",
          from.grid_shape(), " (", from.num_parts(), " parts) and ",
          to.grid_shape(), " (", to.num_parts(), " parts)");
  require(part >= 0 && part < from.num_parts(), ErrorKind::kInvalidArgument,
          "part ", part, " outside [0, ", from.num_parts(), ")");
  RedistributionPlan plan;
  const Box have = from.shard(part);
  const Box want = to.shard(part);
  for (int p = 0; p < from.num_parts(); ++p) {
    const Box out = intersect(have, to.shard(p));
    if (p == part) {
      plan.kept = out;
      continue;
    }
    if (!out.empty()) plan.sends.push_back({p, out});
    const Box in = intersect(want, from.shard(p));
    if (!in.empty()) plan.recvs.push_back({p, in});
  }
  return plan;
}

#define DISTCONV_INSTANTIATE(T) template class Redistribution<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE
// Data the PyTorch front end moves as it is: class labels, masks.
template class Redistribution<std::int32_t>;
template class Redistribution<std::int64_t>;
template class Redistribution<std::uint8_t>;

}  // namespace distconv
