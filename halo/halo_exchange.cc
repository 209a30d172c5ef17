#include "halo/halo_exchange.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/box_rows.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {

using internal::check_mpi;
using internal::for_each_row;

namespace {

// Offsets of consecutive messages in one pack buffer.
std::vector<Index> offsets_of(const std::vector<HaloMessage>& messages) {
  std::vector<Index> off{0};
  for (const HaloMessage& m : messages) {
    require(m.local.volume() <= INT_MAX, ErrorKind::kUnsupported,
            "halo message of ", m.local.volume(),
            " elements exceeds MPI's count limit");
    off.push_back(off.back() + m.local.volume());
  }
  return off;
}

template <typename T>
void pack(const T* buffer, const Shape& extent, const Box& box, T* out) {
  for_each_row(extent, box, [&](Index off, Index len) {
    out = std::copy(buffer + off, buffer + off + len, out);
  });
}

template <typename T, typename Op>
void unpack(const T* in, const Shape& extent, const Box& box, T* buffer,
            Op op) {
  for_each_row(extent, box, [&](Index off, Index len) {
    T* row = buffer + off;
    for (Index i = 0; i < len; ++i) row[i] = op(row[i], in[i]);
    in += len;
  });
}

template <typename T>
void unpack_assign(const T* in, const Shape& extent, const Box& box,
                   T* buffer) {
  for_each_row(extent, box, [&](Index off, Index len) {
    std::copy(in, in + len, buffer + off);
    in += len;
  });
}

// An MPI datatype for `box` inside a row-major array of extent `extent`.
template <typename T>
MPI_Datatype subarray(const Shape& extent, const Box& box) {
  const int n = extent.ndims();
  int sizes[kMaxDims], subsizes[kMaxDims], starts[kMaxDims];
  for (int d = 0; d < n; ++d) {
    require(extent[d] <= INT_MAX, ErrorKind::kUnsupported, "local extent ",
            extent, " exceeds MPI's count limit");
    sizes[d] = static_cast<int>(extent[d]);
    subsizes[d] = static_cast<int>(box.extent[d]);
    starts[d] = static_cast<int>(box.lower[d]);
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_subarray(n, sizes, subsizes, starts, MPI_ORDER_C,
                                     internal::mpi_datatype<T>(), &type),
            "MPI_Type_create_subarray");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

}  // namespace

enum class Role { kSend, kReceive };

template <typename T>
struct HaloExchange<T>::Impl {
  HaloLayout layout;
  HaloPlan plan;
  HaloTransport transport;
  Shape local_shape;
  MPI_Comm comm = MPI_COMM_NULL;
  // kMpiDatatypes: one datatype per message, over the tensor's buffer.
  std::vector<MPI_Datatype> send_types, recv_types;
  // `shard_cells` holds the cells of the send boxes (packed for a forward
  // kPackedBuffers exchange; arriving contributions of a reverse exchange),
  // `halo_cells` those of the receive boxes (kPackedBuffers only).
  std::vector<T> shard_cells, halo_cells;
  std::vector<Index> send_off, recv_off;
  std::vector<MPI_Request> requests;
  DistTensor<T>* tensor = nullptr;  // non-null while in flight
  HaloExchangeOptions options;

  Impl(const ProcessGrid& grid, const HaloLayout& l, HaloTransport t)
      : layout(l),
        plan(make_halo_plan(l, grid.rank())),
        transport(t),
        local_shape(l.local_shape(grid.rank())) {
    send_off = offsets_of(plan.sends);
    recv_off = offsets_of(plan.recvs);
    shard_cells.resize(send_off.back());
    if (transport == HaloTransport::kPackedBuffers) {
      halo_cells.resize(recv_off.back());
    } else {
      for (const HaloMessage& m : plan.sends) {
        send_types.push_back(subarray<T>(local_shape, m.local));
      }
      for (const HaloMessage& m : plan.recvs) {
        recv_types.push_back(subarray<T>(local_shape, m.local));
      }
    }
    requests.reserve(plan.sends.size() + plan.recvs.size());
    check_mpi(MPI_Comm_dup(grid.comm(), &comm), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
  }

  ~Impl() {
    if (!requests.empty()) {
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                  MPI_STATUSES_IGNORE);
    }
    for (MPI_Datatype& t : send_types) MPI_Type_free(&t);
    for (MPI_Datatype& t : recv_types) MPI_Type_free(&t);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

  void irecv(void* buf, int count, MPI_Datatype type, const HaloMessage& m) {
    requests.emplace_back();
    check_mpi(
        MPI_Irecv(buf, count, type, m.peer, m.tag, comm, &requests.back()),
        "MPI_Irecv");
  }

  void isend(const void* buf, int count, MPI_Datatype type,
             const HaloMessage& m) {
    requests.emplace_back();
    check_mpi(
        MPI_Isend(buf, count, type, m.peer, m.tag, comm, &requests.back()),
        "MPI_Isend");
  }

  // Sends or receives the cells of messages[i] straight from/into the
  // tensor (datatypes), or through the packed buffer `cells` at `off[i]`.
  void post(const std::vector<HaloMessage>& messages,
            const std::vector<MPI_Datatype>& types, std::vector<T>& cells,
            const std::vector<Index>& off, Role role) {
    const MPI_Datatype element = internal::mpi_datatype<T>();
    T* data = tensor->data();
    for (size_t i = 0; i < messages.size(); ++i) {
      const HaloMessage& m = messages[i];
      const int count = static_cast<int>(m.local.volume());
      if (transport == HaloTransport::kMpiDatatypes) {
        if (role == Role::kReceive)
          irecv(data, 1, types[i], m);
        else
          isend(data, 1, types[i], m);
        continue;
      }
      T* packed = cells.data() + off[i];
      if (role == Role::kReceive) {
        irecv(packed, count, element, m);
      } else {
        pack(data, local_shape, m.local, packed);
        isend(packed, count, element, m);
      }
    }
  }

  void start_forward() {
    post(plan.recvs, recv_types, halo_cells, recv_off, Role::kReceive);
    post(plan.sends, send_types, shard_cells, send_off, Role::kSend);
  }

  // Contributions always arrive packed, to be accumulated in wait().
  void start_reverse() {
    const MPI_Datatype element = internal::mpi_datatype<T>();
    for (size_t i = 0; i < plan.sends.size(); ++i) {
      irecv(shard_cells.data() + send_off[i],
            static_cast<int>(plan.sends[i].local.volume()), element,
            plan.sends[i]);
    }
    post(plan.recvs, recv_types, halo_cells, recv_off, Role::kSend);
  }
};

template <typename T>
HaloExchange<T>::HaloExchange(const ProcessGrid& grid, const HaloLayout& layout,
                              const HaloExchangeConfig& config) {
  require(layout.distribution().grid_shape() == grid.shape(),
          ErrorKind::kGridMismatch, "halo layout over grid ",
          layout.distribution().grid_shape(), " used with a process grid ",
          grid.shape());
  impl_ = std::make_unique<Impl>(grid, layout, config.transport);
}

template <typename T>
HaloExchange<T>::~HaloExchange() = default;
template <typename T>
HaloExchange<T>::HaloExchange(HaloExchange&&) noexcept = default;
template <typename T>
HaloExchange<T>& HaloExchange<T>::operator=(HaloExchange&&) noexcept = default;

template <typename T>
const HaloPlan& HaloExchange<T>::plan() const {
  return impl_->plan;
}
template <typename T>
const HaloLayout& HaloExchange<T>::layout() const {
  return impl_->layout;
}
template <typename T>
bool HaloExchange<T>::in_flight() const {
  return impl_->tensor != nullptr;
}

template <typename T>
void HaloExchange<T>::start(DistTensor<T>& tensor,
                            const HaloExchangeOptions& options) {
  Impl& s = *impl_;
  require(s.tensor == nullptr, ErrorKind::kState,
          "start() called while an exchange is in flight; call wait() first");
  require(tensor.layout() == s.layout && tensor.part() == s.plan.part,
          ErrorKind::kShapeMismatch, "tensor of global shape ",
          tensor.global_shape(),
          " does not have the layout this halo exchange was planned for");
  s.tensor = &tensor;
  s.options = options;
  if (options.direction == HaloDirection::kForward) {
    s.start_forward();
  } else {
    s.start_reverse();
  }
}

template <typename T>
void HaloExchange<T>::wait() {
  Impl& s = *impl_;
  require(s.tensor != nullptr, ErrorKind::kState,
          "wait() called with no exchange in flight");
  DistTensor<T>& tensor = *s.tensor;
  s.tensor = nullptr;
  const int n = static_cast<int>(s.requests.size());
  const int code = MPI_Waitall(n, s.requests.data(), MPI_STATUSES_IGNORE);
  s.requests.clear();
  check_mpi(code, "MPI_Waitall");
  T* data = tensor.data();
  if (s.options.direction == HaloDirection::kForward) {
    if (s.transport == HaloTransport::kPackedBuffers) {
      for (size_t i = 0; i < s.plan.recvs.size(); ++i) {
        unpack_assign(s.halo_cells.data() + s.recv_off[i], s.local_shape,
                      s.plan.recvs[i].local, data);
      }
    }
    return;
  }
  for (size_t i = 0; i < s.plan.sends.size(); ++i) {
    const T* in = s.shard_cells.data() + s.send_off[i];
    const Box& box = s.plan.sends[i].local;
    if (s.options.reduction == HaloReduction::kSum) {
      unpack(in, s.local_shape, box, data, [](T a, T b) { return a + b; });
    } else {
      unpack(in, s.local_shape, box, data,
             [](T a, T b) { return std::max(a, b); });
    }
  }
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace distconv
