// The host-memory transports behind HaloExchange<T, HostSpace>: the
// shared-memory window, packed MPI point-to-point messages and MPI subarray
// datatypes (halo_options.h says how each moves cells). One class runs all
// three: they share the message routes and differ per message in where the
// cells go (a peer's inbox, a packed buffer, or MPI reading the tensor).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/box_copy.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/memory_space.h"
#include "halo/halo_exchange.h"
#include "halo/internal/shared_inbox.h"
#include "halo/transport.h"

namespace distconv::internal {
namespace {

// Per peer: how many messages, how many elements, and a hash of their
// (tag, size) sequence.
// (Unsigned: the hash wraps around.)
std::vector<unsigned long long> per_peer(
    const std::vector<HaloMessage>& messages, int ranks) {
  std::vector<unsigned long long> out(3 * static_cast<size_t>(ranks), 0);
  for (const HaloMessage& m : messages) {
    unsigned long long* p = &out[3 * static_cast<size_t>(m.peer)];
    const auto volume = static_cast<unsigned long long>(m.local.volume());
    p[0] += 1;
    p[1] += volume;
    p[2] = p[2] * 1000003ull +
           static_cast<unsigned long long>(m.tag) * 7919ull + volume;
  }
  return out;
}

// Every pair of ranks planned the same messages between them (what one
// sends, the other receives), else the same Error on every rank before
// any message moves: ranks whose layouts differ would otherwise wait for
// messages that never come or write past the room a receiver made.
void check_pairs(MPI_Comm comm, const HaloPlan& plan) {
  int ranks = 0, me = 0;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  const std::vector<unsigned long long> sends = per_peer(plan.sends, ranks);
  const std::vector<unsigned long long> expected = per_peer(plan.recvs, ranks);
  std::vector<unsigned long long> arriving(sends.size());
  check_mpi(MPI_Alltoall(sends.data(), 3, MPI_UNSIGNED_LONG_LONG,
                         arriving.data(), 3, MPI_UNSIGNED_LONG_LONG, comm),
            "MPI_Alltoall");
  std::string problem;
  for (int p = 0; p < ranks && problem.empty(); ++p) {
    const unsigned long long* got = &arriving[3 * static_cast<size_t>(p)];
    const unsigned long long* want = &expected[3 * static_cast<size_t>(p)];
    if (got[0] == want[0] && got[1] == want[1] && got[2] == want[2]) continue;
    problem = "rank " + std::to_string(p) + " plans " + std::to_string(got[0]) +
              " halo messages of " + std::to_string(got[1]) +
              " elements to rank " + std::to_string(me) +
              ", which plans to receive " + std::to_string(want[0]) + " of " +
              std::to_string(want[1]) + ": the ranks planned different layouts";
  }
  run_collectively(comm, [&] {
    require(problem.empty(), ErrorKind::kShapeMismatch, problem);
  });
}

// Checks, together on all ranks, what each rank sees only for itself: its
// message sizes and local extents against MPI's int counts, and that every
// rank chose the same kind of shared-memory group. Every rank throws the
// same Error, before any other communication.
void validate_collectively(MPI_Comm comm, const HaloPlan& plan,
                           const Shape& local_shape, HaloTransport transport,
                           const HaloSetupOptions& setup) {
  long long biggest = 0, extent = 0;
  for (const auto* list : {&plan.sends, &plan.recvs}) {
    for (const HaloMessage& m : *list) {
      biggest = std::max<long long>(biggest, m.local.volume());
    }
  }
  for (Index e : local_shape) extent = std::max<long long>(extent, e);
  const long long node = setup.shared_memory_comm == MPI_COMM_NULL;
  long long mine[4] = {biggest, extent, node, -node};
  long long most[4];
  check_mpi(MPI_Allreduce(mine, most, 4, MPI_LONG_LONG, MPI_MAX, comm),
            "MPI_Allreduce");
  require(most[2] == -most[3], ErrorKind::kInvalidArgument,
          "some ranks pass a shared_memory_comm and others MPI_COMM_NULL");
  require(most[0] <= INT_MAX, ErrorKind::kUnsupported, "a halo message of ",
          most[0], " elements exceeds MPI's count limit of ", INT_MAX);
  require(transport != HaloTransport::kMpiDatatypes || most[1] <= INT_MAX,
          ErrorKind::kUnsupported, "a local extent of ", most[1],
          " exceeds MPI's count limit of ", INT_MAX);
  check_pairs(comm, plan);
}

// An MPI datatype for `box` inside a row-major array of extent `extent`.
template <typename T>
MPI_Datatype subarray(const Shape& extent, const Box& box) {
  const int n = extent.ndims();
  int sizes[kMaxDims], subsizes[kMaxDims], starts[kMaxDims];
  for (int d = 0; d < n; ++d) {  // extents checked by validate_collectively
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

// Tags of control messages; data messages use the plan's tag (< 3^5).
struct Tags {
  int notify;  // zero bytes: "your inbox holds my message"
  int credit;  // zero bytes: "I have read your message, my inbox is free"
  int offset;  // set-up: where in my inbox your message goes (-1: not shared)
  int reach;   // set-up: whether I can write your inbox (1) or not (0)
};
constexpr Tags kForwardTags{256, 512, 768, 896};
constexpr Tags kReverseTags{1024, 1280, 1536, 1664};

// One direction of the exchange: the messages this rank packs and sends
// (`out`) and those it receives (`in`), with their buffers. Forward sends
// shard boxes and receives halo boxes; reverse the other way round.
template <typename T>
struct Route {
  const std::vector<HaloMessage>* out;
  const std::vector<HaloMessage>* in;
  std::vector<Index> out_off, in_off;  // element offsets in the buffers
  std::vector<T>* out_buf;             // packed outgoing cells
  std::vector<T>* in_buf;              // packed incoming cells
  Tags tags;
  // kMpiDatatypes: datatypes over the tensor (in_types empty for reverse,
  // whose contributions arrive packed to be accumulated).
  std::vector<MPI_Datatype> out_types, in_types;
  // kSharedMemory: where my `in` messages land in my inbox, where my `out`
  // messages go in the peer's inbox, which peers share memory, and the
  // credits this rank waits for before writing a peer's inbox again.
  Index inbox_base = 0;
  std::vector<Index> remote_off;
  std::vector<char> out_shared, in_shared;
  std::vector<MPI_Request> credits;
};

template <typename T>
class HostTransport final : public Transport {
 public:
  const HaloLayout& layout;  // the exchange's, which outlive the transport
  const HaloPlan& plan;
  HaloTransport transport;
  Shape storage_shape;  // the local buffer as a row-major array
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<T> shard_cells, halo_cells;  // packed send / receive boxes
  Route<T> forward, reverse;
  std::optional<SharedInbox> inbox;   // kSharedMemory only
  std::vector<MPI_Request> requests;  // of the exchange in flight
  std::vector<MPI_Request> credit_sends;
  T* data = nullptr;  // the tensor's buffer in flight
  HaloCallOptions options;

  HostTransport(const ProcessGrid& grid, const HaloLayout& l, const HaloPlan& p,
                HaloTransport t, const HaloSetupOptions& setup)
      : layout(l),
        plan(p),
        transport(t),
        storage_shape(l.storage_shape(grid.rank())) {
    validate_collectively(grid.comm(), plan, storage_shape, transport, setup);
    check_mpi(MPI_Comm_dup(grid.comm(), &comm), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
    const std::vector<Index> send_off = packed_offsets(plan.sends);
    const std::vector<Index> recv_off = packed_offsets(plan.recvs);
    shard_cells.resize(send_off.back());
    halo_cells.resize(recv_off.back());
    forward = {&plan.sends,  &plan.recvs, send_off,    recv_off,
               &shard_cells, &halo_cells, kForwardTags};
    reverse = {&plan.recvs, &plan.sends,  recv_off,    send_off,
               &halo_cells, &shard_cells, kReverseTags};
    if (transport == HaloTransport::kMpiDatatypes) {
      for (const HaloMessage& m : plan.sends) {
        forward.out_types.push_back(
            subarray<T>(storage_shape, layout.to_storage(m.local)));
      }
      for (const HaloMessage& m : plan.recvs) {
        forward.in_types.push_back(
            subarray<T>(storage_shape, layout.to_storage(m.local)));
        reverse.out_types.push_back(
            subarray<T>(storage_shape, layout.to_storage(m.local)));
      }
    }
    if (transport == HaloTransport::kSharedMemory) {
      // My inbox: forward arrivals (halo cells), then reverse arrivals.
      inbox.emplace(comm, setup.shared_memory_comm,
                    sizeof(T) * (recv_off.back() + send_off.back()));
      reverse.inbox_base = recv_off.back();
      connect(forward);
      connect(reverse);
    }
    requests.reserve(plan.sends.size() + plan.recvs.size());
  }

  ~HostTransport() override {
    try {
      wait_all(credit_sends);
      wait_all(forward.credits);  // peers send them when they finish too
      wait_all(reverse.credits);
    } catch (const Error&) {
      // MPI failed while completing; nothing more can be done here.
    }
    for (Route<T>* r : {&forward, &reverse}) {
      for (MPI_Datatype& t : r->out_types) MPI_Type_free(&t);
      for (MPI_Datatype& t : r->in_types) MPI_Type_free(&t);
    }
    inbox.reset();
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }

  Route<T>& route_in_flight() {
    return options.direction == HaloDirection::kForward ? forward : reverse;
  }

  void irecv(void* buf, int count, MPI_Datatype type, int peer, int tag,
             std::vector<MPI_Request>& into) {
    into.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Irecv(buf, count, type, peer, tag, comm, &into.back()),
              "MPI_Irecv");
  }

  void isend(const void* buf, int count, MPI_Datatype type, int peer, int tag,
             std::vector<MPI_Request>& into) {
    into.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(buf, count, type, peer, tag, comm, &into.back()),
              "MPI_Isend");
  }

  // Set-up for kSharedMemory: where each of my outgoing messages goes in
  // its receiver's inbox. Both ends of a message say whether they can reach
  // the other through the window; it goes through the window only if both
  // can, so the two ends always agree.
  void connect(Route<T>& r) {
    const std::vector<HaloMessage>& out = *r.out;
    const std::vector<HaloMessage>& in = *r.in;
    std::vector<Index> my_offset(in.size()), their_reach(in.size());
    std::vector<Index> my_reach(out.size());
    r.remote_off.assign(out.size(), -1);
    std::vector<MPI_Request> pending;
    for (size_t i = 0; i < in.size(); ++i) {
      const HaloMessage& m = in[i];
      my_offset[i] =
          inbox->shares_memory_with(m.peer) ? r.inbox_base + r.in_off[i] : -1;
      isend(&my_offset[i], 1, MPI_INT64_T, m.peer, r.tags.offset + m.tag,
            pending);
      irecv(&their_reach[i], 1, MPI_INT64_T, m.peer, r.tags.reach + m.tag,
            pending);
    }
    for (size_t j = 0; j < out.size(); ++j) {
      const HaloMessage& m = out[j];
      my_reach[j] = inbox->shares_memory_with(m.peer);
      isend(&my_reach[j], 1, MPI_INT64_T, m.peer, r.tags.reach + m.tag,
            pending);
      irecv(&r.remote_off[j], 1, MPI_INT64_T, m.peer, r.tags.offset + m.tag,
            pending);
    }
    wait_all(pending);
    for (size_t i = 0; i < in.size(); ++i) {
      r.in_shared.push_back(my_offset[i] >= 0 && their_reach[i] != 0);
    }
    for (size_t j = 0; j < out.size(); ++j) {
      r.out_shared.push_back(my_reach[j] != 0 && r.remote_off[j] >= 0);
    }
  }

  bool shared(const std::vector<char>& flags, size_t i) const {
    return transport == HaloTransport::kSharedMemory && flags[i];
  }

  void post(Route<T>& r) {
    const MPI_Datatype element = internal::mpi_datatype<T>();
    const std::vector<HaloMessage>& out = *r.out;
    const std::vector<HaloMessage>& in = *r.in;
    for (size_t i = 0; i < in.size(); ++i) {
      const HaloMessage& m = in[i];
      if (shared(r.in_shared, i)) {
        irecv(nullptr, 0, MPI_BYTE, m.peer, r.tags.notify + m.tag, requests);
      } else if (!r.in_types.empty()) {
        irecv(data, 1, r.in_types[i], m.peer, m.tag, requests);
      } else {
        irecv(r.in_buf->data() + r.in_off[i],
              static_cast<int>(m.local.volume()), element, m.peer, m.tag,
              requests);
      }
    }
    wait_all(credit_sends);
    wait_all(r.credits);  // receivers have read what I wrote last time
    if (transport == HaloTransport::kSharedMemory) inbox->sync();
    bool wrote_shared = false;
    for (size_t j = 0; j < out.size(); ++j) {
      const HaloMessage& m = out[j];
      if (shared(r.out_shared, j)) {
        T* dst = reinterpret_cast<T*>(inbox->of(m.peer)) + r.remote_off[j];
        pack_box<T>(data, storage_shape, layout.to_storage(m.local), dst);
        wrote_shared = true;
      } else if (!r.out_types.empty()) {
        isend(data, 1, r.out_types[j], m.peer, m.tag, requests);
      } else {
        T* packed = r.out_buf->data() + r.out_off[j];
        pack_box<T>(data, storage_shape, layout.to_storage(m.local), packed);
        isend(packed, static_cast<int>(m.local.volume()), element, m.peer,
              m.tag, requests);
      }
    }
    if (!wrote_shared) return;
    inbox->sync();
    for (size_t j = 0; j < out.size(); ++j) {
      if (!shared(r.out_shared, j)) continue;
      isend(nullptr, 0, MPI_BYTE, out[j].peer, r.tags.notify + out[j].tag,
            requests);
      irecv(nullptr, 0, MPI_BYTE, out[j].peer, r.tags.credit + out[j].tag,
            r.credits);
    }
  }

  // Completes the exchange in flight; combine(src, box) folds each incoming
  // message into the tensor, box in storage order (null: drop them).
  template <typename Combine>
  void complete(Route<T>& r, Combine combine) {
    wait_all(requests);
    const std::vector<HaloMessage>& in = *r.in;
    if (transport == HaloTransport::kSharedMemory) inbox->sync();
    for (size_t i = 0; i < in.size(); ++i) {
      const T* src = nullptr;
      if (shared(r.in_shared, i)) {
        src = reinterpret_cast<const T*>(inbox->mine()) + r.inbox_base +
              r.in_off[i];
      } else if (r.in_types.empty()) {
        src = r.in_buf->data() + r.in_off[i];
      }
      if constexpr (!std::is_same_v<Combine, std::nullptr_t>) {
        if (src != nullptr) combine(src, layout.to_storage(in[i].local));
      }
    }
    if (transport != HaloTransport::kSharedMemory) return;
    inbox->sync();  // reads done before the senders may write again
    for (size_t i = 0; i < in.size(); ++i) {
      if (!shared(r.in_shared, i)) continue;
      isend(nullptr, 0, MPI_BYTE, in[i].peer, r.tags.credit + in[i].tag,
            credit_sends);
    }
  }

  HaloTransport kind() const override { return transport; }

  void start(void* buffer, const HaloCallOptions& call) override {
    data = static_cast<T*>(buffer);
    options = call;
    post(route_in_flight());
  }

  void finish() override {
    const Shape& extent = storage_shape;  // boxes come in storage order
    T* out = data;
    if (options.direction == HaloDirection::kForward) {
      complete(forward, [&](const T* src, const Box& box) {
        unpack_box(src, extent, box, out);
      });
    } else if (options.reduction == HaloReduction::kSum) {
      complete(reverse, [&](const T* src, const Box& box) {
        combine_box(src, extent, box, out, [](T a, T b) { return a + b; });
      });
    } else {
      complete(reverse, [&](const T* src, const Box& box) {
        combine_box(src, extent, box, out,
                    [](T a, T b) { return std::max(a, b); });
      });
    }
  }

  void drain() override { complete(route_in_flight(), nullptr); }

  void abandon() noexcept override { free_requests(requests); }
};

}  // namespace

template <typename T>
TransportPtr make_host_transport(const ProcessGrid& grid,
                                 const HaloLayout& layout, const HaloPlan& plan,
                                 const HaloSetupOptions& setup) {
  const HaloTransport transport = resolve_transport(
      setup.transport, HaloTransport::kSharedMemory,
      {HaloTransport::kSharedMemory, HaloTransport::kPackedBuffers,
       HaloTransport::kMpiDatatypes},
      HostSpace::kName);
  return TransportPtr(
      new HostTransport<T>(grid, layout, plan, transport, setup));
}

#define DISTCONV_HOST_TRANSPORT(T)                            \
  template TransportPtr make_host_transport<T>(               \
      const ProcessGrid&, const HaloLayout&, const HaloPlan&, \
      const HaloSetupOptions&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_HOST_TRANSPORT)
#undef DISTCONV_HOST_TRANSPORT

}  // namespace distconv::internal
