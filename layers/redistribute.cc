#include "layers/redistribute.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"
#include "layers/internal/pointwise.h"
#include "distconv/strided_view.h"

namespace distconv {
namespace {

using internal::check_mpi;

// At most one message per pair of ranks and direction, and each move
// completes before the call returns: one tag serves all.
constexpr int kTag = 0;

Index volume_of(const std::vector<RedistributionMessage>& messages) {
  Index v = 0;
  for (const RedistributionMessage& m : messages) v += m.box.volume();
  return v;
}

std::vector<Index> offsets_of(
    const std::vector<RedistributionMessage>& messages) {
  std::vector<Index> off{0};
  for (const RedistributionMessage& m : messages) {
    off.push_back(off.back() + m.box.volume());
  }
  return off;
}

// Both grids must be the same ranks in the same order. MPI_Comm_compare is
// local, and every rank reaches the same verdict: ranks sharing a source
// communicator also share their destination communicator whenever the two
// hold the same ranks.
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

// Checks together on all ranks what each rank sees only for itself: the
// size of its messages against MPI's int counts.
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

// The view of `global` (a box inside the tensor's shard, global
// coordinates) in the tensor's buffer.
template <typename T>
StridedView<const T> shard_view(const DistTensor<T>& t, const Box& global) {
  return t.interior().subview(global.shifted(-t.shard().lower));
}
template <typename T>
StridedView<T> shard_view(DistTensor<T>& t, const Box& global) {
  return t.interior().subview(global.shifted(-t.shard().lower));
}

// A message's elements in a buffer: dense over the box, in `order`.
template <typename T>
StridedView<T> packed_view(T* data, const Box& box, StorageOrder order) {
  return StridedView<T>(data, box.extent, dense_strides(box.extent, order));
}

}  // namespace

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

template <typename T>
Redistribution<T>::Redistribution(const ProcessGrid& src_grid,
                                  const HaloLayout& src_layout,
                                  const ProcessGrid& dst_grid,
                                  const HaloLayout& dst_layout)
    : src_layout_(src_layout), dst_layout_(dst_layout) {
  internal::run_collectively(src_grid.comm(), [&] {
    require_same_ranks(src_grid, dst_grid);
    internal::check_grid(src_layout.distribution(), src_grid.shape(),
                         "redistribution: source");
    internal::check_grid(dst_layout.distribution(), dst_grid.shape(),
                         "redistribution: destination");
    plan_ = plan_redistribution(src_layout.distribution(),
                                dst_layout.distribution(), src_grid.rank());
  });
  internal::Fingerprint f("redistribution");
  f.add("element type", internal::element_name<T>())
      .add("source", src_layout)
      .add("destination", dst_layout);
  internal::agree(src_grid.comm(), f);
  require_int_counts(src_grid.comm(), plan_);
  send_off_ = offsets_of(plan_.sends);
  recv_off_ = offsets_of(plan_.recvs);
  send_buf_.resize(send_off_.back());
  recv_buf_.resize(recv_off_.back());
  requests_.reserve(plan_.sends.size() + plan_.recvs.size());
  check_mpi(MPI_Comm_dup(src_grid.comm(), &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
}

template <typename T>
Redistribution<T>::~Redistribution() {
  release();
}

template <typename T>
Redistribution<T>::Redistribution(Redistribution&& other) noexcept
    : src_layout_(std::move(other.src_layout_)),
      dst_layout_(std::move(other.dst_layout_)),
      plan_(std::move(other.plan_)),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      send_off_(std::move(other.send_off_)),
      recv_off_(std::move(other.recv_off_)),
      send_buf_(std::move(other.send_buf_)),
      recv_buf_(std::move(other.recv_buf_)),
      requests_(std::move(other.requests_)) {}

template <typename T>
Redistribution<T>& Redistribution<T>::operator=(
    Redistribution&& other) noexcept {
  if (this != &other) {
    release();
    src_layout_ = std::move(other.src_layout_);
    dst_layout_ = std::move(other.dst_layout_);
    plan_ = std::move(other.plan_);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    send_off_ = std::move(other.send_off_);
    recv_off_ = std::move(other.recv_off_);
    send_buf_ = std::move(other.send_buf_);
    recv_buf_ = std::move(other.recv_buf_);
    requests_ = std::move(other.requests_);
  }
  return *this;
}

template <typename T>
void Redistribution<T>::require_not_moved_from() const {
  require(comm_ != MPI_COMM_NULL, ErrorKind::kState,
          "redistribution: the plan was moved from");
}

template <typename T>
void Redistribution<T>::release() noexcept {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

template <typename T>
void Redistribution<T>::forward(const DistTensor<T>& src, DistTensor<T>& dst) {
  require_not_moved_from();
  internal::run_collectively(comm_, [&] {
    internal::check_plan_layout(src.layout(), src_layout_, "src",
                                "redistribution");
    internal::check_plan_layout(dst.layout(), dst_layout_, "dst",
                                "redistribution");
  });
  move(plan_.sends, send_off_, plan_.recvs, recv_off_, src, dst,
       send_buf_.data(), recv_buf_.data());
}

template <typename T>
void Redistribution<T>::backward(const DistTensor<T>& dst_grad,
                                 DistTensor<T>& src_grad) {
  require_not_moved_from();
  internal::run_collectively(comm_, [&] {
    internal::check_plan_layout(dst_grad.layout(), dst_layout_, "dst_grad",
                                "redistribution");
    internal::check_plan_layout(src_grad.layout(), src_layout_, "src_grad",
                                "redistribution");
  });
  move(plan_.recvs, recv_off_, plan_.sends, send_off_, dst_grad, src_grad,
       recv_buf_.data(), send_buf_.data());
}

template <typename T>
void Redistribution<T>::move(const std::vector<RedistributionMessage>& out,
                             const std::vector<Index>& out_off,
                             const std::vector<RedistributionMessage>& in,
                             const std::vector<Index>& in_off,
                             const DistTensor<T>& from, DistTensor<T>& to,
                             T* out_buf, T* in_buf) {
  // Messages travel in the sender's storage order: packing is then a copy
  // of contiguous runs, and only a receiver of the other order transposes.
  const StorageOrder order = from.layout().storage_order();
  const MPI_Datatype type = internal::mpi_datatype<T>();
  requests_.assign(in.size() + out.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < in.size(); ++i) {  // counts checked at planning
    check_mpi(
        MPI_Irecv(in_buf + in_off[i], static_cast<int>(in[i].box.volume()),
                  type, in[i].peer, kTag, comm_, &requests_[i]),
        "MPI_Irecv");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    T* packed = out_buf + out_off[i];
    internal::copy(shard_view(from, out[i].box),
                   packed_view(packed, out[i].box, order));
    check_mpi(MPI_Isend(packed, static_cast<int>(out[i].box.volume()), type,
                        out[i].peer, kTag, comm_, &requests_[in.size() + i]),
              "MPI_Isend");
  }
  if (!plan_.kept.empty()) {
    internal::copy(shard_view(from, plan_.kept), shard_view(to, plan_.kept));
  }
  // Unpack each message as it arrives.
  for (size_t k = 0; k < in.size(); ++k) {
    int i = MPI_UNDEFINED;
    check_mpi(MPI_Waitany(static_cast<int>(in.size()), requests_.data(), &i,
                          MPI_STATUS_IGNORE),
              "MPI_Waitany");
    const StridedView<T> packed =
        packed_view(in_buf + in_off[i], in[i].box, order);
    internal::copy(StridedView<const T>(packed), shard_view(to, in[i].box));
  }
  internal::wait_all(static_cast<int>(out.size()),
                     requests_.data() + in.size());
}

template class Redistribution<float>;
template class Redistribution<double>;
template class Redistribution<bf16>;

}  // namespace distconv
