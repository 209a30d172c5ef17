// Internal: Redistribution<T, Space>'s members, written once for host and
// device memory (layers/redistribute.cc instantiates them for the host,
// layers/device_redistribute.cc for the GPU). The plan and the MPI
// messages are the same in both; a space's copies (kernels/space_ops.h)
// pack and unpack the boxes, and device messages pass through the host on
// the space's context (layers/internal/host_staging.h).
#ifndef DISTCONV_LAYERS_INTERNAL_REDISTRIBUTE_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_REDISTRIBUTE_IMPL_H_

#include <mpi.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/layer_checks.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/strided_view.h"
#include "layers/internal/host_staging.h"
#include "layers/internal/pointwise.h"
#include "layers/redistribute.h"

namespace distconv {
namespace internal {

// At most one message per pair of ranks and direction, and each move
// completes before the call returns: one tag serves all.
inline constexpr int kRedistributionTag = 0;

// The messages' offsets in a buffer (one more entry than messages).
std::vector<Index> message_offsets(
    const std::vector<RedistributionMessage>& messages);
// Both grids must be the same ranks in the same order (kGridMismatch).
void require_same_ranks(const ProcessGrid& src, const ProcessGrid& dst);
// Checks together on all ranks what each rank sees only for itself: the
// size of its messages against MPI's int counts (kUnsupported).
void require_int_counts(MPI_Comm comm, const RedistributionPlan& plan);

// The view of `global` (a box inside the tensor's shard, global
// coordinates) in the tensor's buffer.
template <typename T, typename Space>
StridedView<const T, Space> shard_view(const DistTensor<T, Space>& t,
                                       const Box& global) {
  return t.interior().subview(global.shifted(-t.shard().lower));
}
template <typename T, typename Space>
StridedView<T, Space> shard_view(DistTensor<T, Space>& t, const Box& global) {
  return t.interior().subview(global.shifted(-t.shard().lower));
}

// A message's elements in a buffer: dense over the box, in `order`.
template <typename T, typename Space>
StridedView<T, Space> packed_view(T* data, const Box& box,
                                  StorageOrder order) {
  return StridedView<T, Space>(data, box.extent,
                               dense_strides(box.extent, order));
}

}  // namespace internal

template <typename T, typename Space>
Redistribution<T, Space>::Redistribution(const ProcessGrid& src_grid,
                                         const HaloLayout& src_layout,
                                         const ProcessGrid& dst_grid,
                                         const HaloLayout& dst_layout,
                                         const Exec<Space>& exec)
    : src_layout_(src_layout), dst_layout_(dst_layout), exec_(exec) {
  internal::run_collectively(src_grid.comm(), [&] {
    internal::require_same_ranks(src_grid, dst_grid);
    internal::check_grid(src_layout.distribution(), src_grid.shape(),
                         "redistribution: source");
    internal::check_grid(dst_layout.distribution(), dst_grid.shape(),
                         "redistribution: destination");
    plan_ = plan_redistribution(src_layout.distribution(),
                                dst_layout.distribution(), src_grid.rank());
  });
  internal::Fingerprint f("redistribution");
  f.add("element type", internal::element_name<T>())
      .add("memory", Space::kName)
      .add("source", src_layout)
      .add("destination", dst_layout);
  internal::agree(src_grid.comm(), f);
  internal::require_int_counts(src_grid.comm(), plan_);
  send_off_ = internal::message_offsets(plan_.sends);
  recv_off_ = internal::message_offsets(plan_.recvs);
  send_buf_.resize(send_off_.back());
  recv_buf_.resize(recv_off_.back());
  if constexpr (!Space::kHostAccessible) {
    // A failed allocation on one rank throws on every rank.
    internal::run_collectively(src_grid.comm(), [&] {
      const std::size_t n = send_buf_.size() + recv_buf_.size();
      if (n > 0) device_buf_.reset(Space::allocate(sizeof(T) * n));
    });
  }
  requests_.reserve(plan_.sends.size() + plan_.recvs.size());
  internal::check_mpi(MPI_Comm_dup(src_grid.comm(), &comm_), "MPI_Comm_dup");
  internal::check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
                      "MPI_Comm_set_errhandler");
}

template <typename T, typename Space>
Redistribution<T, Space>::~Redistribution() {
  release();
}

template <typename T, typename Space>
Redistribution<T, Space>::Redistribution(Redistribution&& other) noexcept
    : src_layout_(std::move(other.src_layout_)),
      dst_layout_(std::move(other.dst_layout_)),
      plan_(std::move(other.plan_)),
      exec_(other.exec_),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      send_off_(std::move(other.send_off_)),
      recv_off_(std::move(other.recv_off_)),
      send_buf_(std::move(other.send_buf_)),
      recv_buf_(std::move(other.recv_buf_)),
      device_buf_(std::move(other.device_buf_)),
      requests_(std::move(other.requests_)) {}

template <typename T, typename Space>
Redistribution<T, Space>& Redistribution<T, Space>::operator=(
    Redistribution&& other) noexcept {
  if (this != &other) {
    release();
    src_layout_ = std::move(other.src_layout_);
    dst_layout_ = std::move(other.dst_layout_);
    plan_ = std::move(other.plan_);
    exec_ = other.exec_;
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    send_off_ = std::move(other.send_off_);
    recv_off_ = std::move(other.recv_off_);
    send_buf_ = std::move(other.send_buf_);
    recv_buf_ = std::move(other.recv_buf_);
    device_buf_ = std::move(other.device_buf_);
    requests_ = std::move(other.requests_);
  }
  return *this;
}

template <typename T, typename Space>
void Redistribution<T, Space>::require_not_moved_from() const {
  require(comm_ != MPI_COMM_NULL, ErrorKind::kState,
          "redistribution: the plan was moved from");
}

template <typename T, typename Space>
void Redistribution<T, Space>::release() noexcept {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

template <typename T, typename Space>
void Redistribution<T, Space>::forward(const DistTensor<T, Space>& src,
                                       DistTensor<T, Space>& dst) {
  require_not_moved_from();
  internal::run_collectively(comm_, [&] {
    internal::check_plan_layout(src.layout(), src_layout_, "src",
                                "redistribution");
    internal::check_plan_layout(dst.layout(), dst_layout_, "dst",
                                "redistribution");
  });
  T* dev = static_cast<T*>(device_buf_.get());
  move(plan_.sends, send_off_, plan_.recvs, recv_off_, src, dst,
       send_buf_.data(), recv_buf_.data(), dev,
       dev ? dev + send_buf_.size() : nullptr);
}

template <typename T, typename Space>
void Redistribution<T, Space>::backward(const DistTensor<T, Space>& dst_grad,
                                        DistTensor<T, Space>& src_grad) {
  require_not_moved_from();
  internal::run_collectively(comm_, [&] {
    internal::check_plan_layout(dst_grad.layout(), dst_layout_, "dst_grad",
                                "redistribution");
    internal::check_plan_layout(src_grad.layout(), src_layout_, "src_grad",
                                "redistribution");
  });
  T* dev = static_cast<T*>(device_buf_.get());
  move(plan_.recvs, recv_off_, plan_.sends, send_off_, dst_grad, src_grad,
       recv_buf_.data(), send_buf_.data(),
       dev ? dev + send_buf_.size() : nullptr, dev);
}

template <typename T, typename Space>
void Redistribution<T, Space>::post(
    const std::vector<RedistributionMessage>& out,
    const std::vector<Index>& out_off,
    const std::vector<RedistributionMessage>& in,
    const std::vector<Index>& in_off, T* out_buf, T* in_buf) {
  using internal::check_mpi;
  const MPI_Datatype type = internal::mpi_datatype<T>();
  requests_.assign(in.size() + out.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < in.size(); ++i) {  // counts checked at planning
    check_mpi(
        MPI_Irecv(in_buf + in_off[i], static_cast<int>(in[i].box.volume()),
                  type, in[i].peer, internal::kRedistributionTag, comm_,
                  &requests_[i]),
        "MPI_Irecv");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    check_mpi(MPI_Isend(out_buf + out_off[i],
                        static_cast<int>(out[i].box.volume()), type,
                        out[i].peer, internal::kRedistributionTag, comm_,
                        &requests_[in.size() + i]),
              "MPI_Isend");
  }
}

template <typename T, typename Space>
void Redistribution<T, Space>::move(
    const std::vector<RedistributionMessage>& out,
    const std::vector<Index>& out_off,
    const std::vector<RedistributionMessage>& in,
    const std::vector<Index>& in_off, const DistTensor<T, Space>& from,
    DistTensor<T, Space>& to, T* out_buf, T* in_buf, T* out_dev, T* in_dev) {
  using internal::packed_view;
  using internal::shard_view;
  const Exec<Space>& exec = exec_;
  // Messages travel in the sender's storage order: packing is then a copy
  // of contiguous runs, and only a receiver of the other order transposes.
  const StorageOrder order = from.layout().storage_order();
  // Host memory: packed straight into the send buffer, each message
  // unpacked as it arrives. Device memory: packed on the device (after the
  // work queued before), staged through the host, unpacked on the device.
  constexpr bool kHost = Space::kHostAccessible;
  T* const packed_out = kHost ? out_buf : out_dev;
  T* const packed_in = kHost ? in_buf : in_dev;
  for (size_t i = 0; i < out.size(); ++i) {
    copy<T>(exec, shard_view(from, out[i].box),
            packed_view<T, Space>(packed_out + out_off[i], out[i].box, order));
  }
  if constexpr (!kHost) {
    if (out_off.back() > 0) {
      internal::stage_to_host(exec, out_buf, out_dev,
                              sizeof(T) * out_off.back(), "redistribution");
    }
  }
  post(out, out_off, in, in_off, out_buf, in_buf);
  if (!plan_.kept.empty()) {
    copy<T>(exec, shard_view(from, plan_.kept), shard_view(to, plan_.kept));
  }
  auto unpack = [&](int i) {
    const StridedView<T, Space> packed =
        packed_view<T, Space>(packed_in + in_off[i], in[i].box, order);
    copy<T>(exec, StridedView<const T, Space>(packed),
            shard_view(to, in[i].box));
  };
  if constexpr (kHost) {
    for (size_t k = 0; k < in.size(); ++k) {
      int i = MPI_UNDEFINED;
      internal::check_mpi(MPI_Waitany(static_cast<int>(in.size()),
                                      requests_.data(), &i,
                                      MPI_STATUS_IGNORE),
                          "MPI_Waitany");
      unpack(i);
    }
  } else {
    internal::wait_all(static_cast<int>(in.size()), requests_.data());
    if (in_off.back() > 0) {
      internal::stage_to_device(exec, in_dev, in_buf, sizeof(T) * in_off.back(),
                                "redistribution");
      // The next move receives into in_buf again.
      internal::wait_for(exec,
                         "redistribution: waiting for the received messages");
    }
    for (size_t i = 0; i < in.size(); ++i) unpack(static_cast<int>(i));
  }
  internal::wait_all(static_cast<int>(out.size()),
                     requests_.data() + in.size());
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_REDISTRIBUTE_IMPL_H_
