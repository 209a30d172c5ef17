#include "halo/ipc_route.h"

#include <cstdint>

#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"
#include "halo/transport.h"

namespace distconv::internal {
namespace {

// Tags on the transport's communicator, added to a link's tag (the plan's
// tag, < 3^5, plus the direction's offset, < 512).
constexpr int kOfferTag = 1024;   // set-up: receiver -> sender
constexpr int kNoticeTag = 2048;  // set-up: sender -> receiver
constexpr int kSentTag = 4096;    // each exchange: the copies are queued
constexpr int kFreeTag = 8192;    // each exchange: the buffer is free

// What a receiver tells the sender of one message at set-up, and what the
// sender tells it.
struct Offer {
  cudaIpcMemHandle_t buffer;
  cudaIpcEventHandle_t consumed;
  std::uint64_t offset;
};
struct Notice {
  cudaIpcEventHandle_t sent;
};

// Collective: kUnsupported on every rank unless all of `comm` share a node.
void require_one_node(MPI_Comm comm) {
  int size = 0, node_size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(
      MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type");
  const int got = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  check_mpi(got, "MPI_Comm_size");
  int least = node_size;
  check_mpi(MPI_Allreduce(&node_size, &least, 1, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce");
  require(least == size, ErrorKind::kUnsupported,
          "the CUDA IPC halo transport needs every rank of the grid on one "
          "node (",
          size, " ranks, a node holds ", least, "); use kHostStaged or kNccl");
}

void token(MPI_Comm comm, int peer, int tag, std::vector<MPI_Request>& out) {
  out.push_back(MPI_REQUEST_NULL);
  check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag, comm, &out.back()),
            "MPI_Isend");
}

void take_token(MPI_Comm comm, int peer, int tag) {
  check_mpi(MPI_Recv(nullptr, 0, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
}

}  // namespace

IpcRoute::IpcRoute(MPI_Comm comm, const std::vector<HaloMessage>& out,
                   const std::vector<HaloMessage>& in,
                   const std::vector<Index>& out_off,
                   const std::vector<Index>& in_off, std::size_t element_bytes,
                   const void* out_cells, void* in_cells, int tag_offset)
    : comm_(comm),
      out_cells_(static_cast<const char*>(out_cells)),
      in_cells_(static_cast<char*>(in_cells)) {
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  require_one_node(comm_);
  auto links = [&](const std::vector<HaloMessage>& messages,
                   const std::vector<Index>& off, std::vector<Link>& to) {
    for (std::size_t i = 0; i < messages.size(); ++i) {
      Link l;
      l.peer = messages[i].peer;
      l.tag = messages[i].tag + tag_offset;
      l.offset = element_bytes * static_cast<std::size_t>(off[i]);
      l.bytes = element_bytes * static_cast<std::size_t>(off[i + 1] - off[i]);
      to.push_back(l);
    }
  };
  links(out, out_off, out_);
  links(in, in_off, in_);
  try {
    run_collectively(comm_, [&] {
      for (cudaEvent_t* e : {&sent_, &consumed_}) {
        check_cuda(cudaEventCreateWithFlags(
                       e, cudaEventInterprocess | cudaEventDisableTiming),
                   "cudaEventCreateWithFlags (interprocess)");
      }
    });
    exchange_handles();
  } catch (...) {
    // Every rank fails here (each step of the set-up runs collectively):
    // each closes what it opened before any destroys what it exported
    // (and before the transport frees its buffers).
    close_imports();
    MPI_Barrier(comm_);
    destroy_exports();
    throw;
  }
}

IpcRoute::~IpcRoute() {
  // Every token is taken (none is left to match a later communicator's
  // receive). Every rank's streams are idle (the transport synchronised
  // them), and each rank closes what it opened before any rank destroys
  // its events or frees its buffers (the transport, after this): CUDA
  // leaves an exported region freed while still open elsewhere undefined.
  // After an exchange cut short the tokens no longer match, and nothing is
  // waited for.
  const bool meet = !abandoned_;
  if (meet) {
    try {
      if (sends_ > 0) {
        for (const Link& l : out_) take_token(comm_, l.peer, l.tag + kFreeTag);
      }
      wait_all(free_tokens_);
      wait_all(sent_tokens_);
    } catch (const Error&) {  // MPI failed: nothing more to wait for
    }
  }
  free_requests(sent_tokens_);
  free_requests(free_tokens_);
  close_imports();
  if (meet) MPI_Barrier(comm_);
  destroy_exports();
}

void IpcRoute::exchange_handles() {
  cudaIpcMemHandle_t buffer{};
  cudaIpcEventHandle_t consumed{}, sent{};
  run_collectively(comm_, [&] {
    if (in_cells_ != nullptr) {
      check_cuda(cudaIpcGetMemHandle(&buffer, in_cells_),
                 "cudaIpcGetMemHandle of the halo receive buffer");
    }
    check_cuda(cudaIpcGetEventHandle(&consumed, consumed_),
               "cudaIpcGetEventHandle");
    check_cuda(cudaIpcGetEventHandle(&sent, sent_), "cudaIpcGetEventHandle");
  });
  std::vector<Offer> offers(in_.size()), taken(out_.size());
  std::vector<Notice> notices(out_.size(), Notice{sent}), heard(in_.size());
  std::vector<MPI_Request> requests;
  requests.reserve(2 * (in_.size() + out_.size()));
  auto post = [&](bool is_send, void* data, std::size_t bytes, int peer,
                  int tag) {
    requests.push_back(MPI_REQUEST_NULL);
    const int n = static_cast<int>(bytes);
    check_mpi(
        is_send
            ? MPI_Isend(data, n, MPI_BYTE, peer, tag, comm_, &requests.back())
            : MPI_Irecv(data, n, MPI_BYTE, peer, tag, comm_, &requests.back()),
        is_send ? "MPI_Isend" : "MPI_Irecv");
  };
  try {
    for (std::size_t i = 0; i < in_.size(); ++i) {
      offers[i] = Offer{buffer, consumed, in_[i].offset};
      post(true, &offers[i], sizeof(Offer), in_[i].peer,
           in_[i].tag + kOfferTag);
      post(false, &heard[i], sizeof(Notice), in_[i].peer,
           in_[i].tag + kNoticeTag);
    }
    for (std::size_t j = 0; j < out_.size(); ++j) {
      post(true, &notices[j], sizeof(Notice), out_[j].peer,
           out_[j].tag + kNoticeTag);
      post(false, &taken[j], sizeof(Offer), out_[j].peer,
           out_[j].tag + kOfferTag);
    }
  } catch (...) {
    // No receive may outlive the arrays it writes into.
    for (MPI_Request& r : requests) {
      if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
    }
    free_requests(requests);
    throw;
  }
  run_collectively(comm_, [&] { wait_all(requests); });
  run_collectively(comm_, [&] {
    for (std::size_t j = 0; j < out_.size(); ++j) {
      Link& l = out_[j];
      if (l.bytes > 0) {
        l.remote = static_cast<char*>(open_buffer(l.peer, taken[j].buffer)) +
                   taken[j].offset;
      }
      l.event =
          open_event(consumed_events_, l.peer, taken[j].consumed, consumed_);
    }
    for (std::size_t i = 0; i < in_.size(); ++i) {
      in_[i].event =
          open_event(sent_events_, in_[i].peer, heard[i].sent, sent_);
    }
  });
}

void* IpcRoute::open_buffer(int peer, const cudaIpcMemHandle_t& handle) {
  if (peer == rank_) return in_cells_;
  auto it = buffers_.find(peer);
  if (it != buffers_.end()) return it->second;
  void* p = nullptr;
  check_cuda(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess),
             "cudaIpcOpenMemHandle of rank ", peer, "'s halo buffer");
  buffers_[peer] = p;
  return p;
}

cudaEvent_t IpcRoute::open_event(std::map<int, cudaEvent_t>& opened, int peer,
                                 const cudaIpcEventHandle_t& handle,
                                 cudaEvent_t own) {
  if (peer == rank_) return own;
  auto it = opened.find(peer);
  if (it != opened.end()) return it->second;
  cudaEvent_t e = nullptr;
  check_cuda(cudaIpcOpenEventHandle(&e, handle),
             "cudaIpcOpenEventHandle of rank ", peer, "'s event");
  opened[peer] = e;
  return e;
}

void IpcRoute::send(cudaStream_t copy_stream) {
  sending_ = true;
  if (sends_ > 0) {  // each receiver done with the last exchange's cells
    for (const Link& l : out_) take_token(comm_, l.peer, l.tag + kFreeTag);
    for (const Link& l : out_) {
      check_cuda(cudaStreamWaitEvent(copy_stream, l.event, 0),
                 "cudaStreamWaitEvent on a receiver's event");
    }
  }
  wait_all(sent_tokens_);  // the last exchange's, long received
  for (const Link& l : out_) {
    if (l.bytes == 0) continue;
    check_cuda(cudaMemcpyAsync(l.remote, out_cells_ + l.offset, l.bytes,
                               cudaMemcpyDeviceToDevice, copy_stream),
               "cudaMemcpyAsync of halo cells to rank ", l.peer);
  }
  check_cuda(cudaEventRecord(sent_, copy_stream), "cudaEventRecord");
  for (const Link& l : out_) {
    token(comm_, l.peer, l.tag + kSentTag, sent_tokens_);
  }
  ++sends_;
  sending_ = false;
}

void IpcRoute::receive(cudaStream_t stream) {
  for (const Link& l : in_) take_token(comm_, l.peer, l.tag + kSentTag);
  for (const Link& l : in_) {
    check_cuda(cudaStreamWaitEvent(stream, l.event, 0),
               "cudaStreamWaitEvent on a sender's event");
  }
}

void IpcRoute::release(cudaStream_t stream) {
  check_cuda(cudaEventRecord(consumed_, stream), "cudaEventRecord");
  wait_all(free_tokens_);  // the last exchange's, long received
  for (const Link& l : in_) {
    token(comm_, l.peer, l.tag + kFreeTag, free_tokens_);
  }
}

void IpcRoute::abandon() noexcept {
  // A send() cut short leaves tokens unmatched; a failure before it (the
  // pack) leaves the route as it was.
  if (sending_) abandoned_ = true;
  sending_ = false;
}

void IpcRoute::close_imports() noexcept {
  for (auto& [peer, p] : buffers_) cudaIpcCloseMemHandle(p);
  buffers_.clear();
  for (auto* opened : {&consumed_events_, &sent_events_}) {
    for (auto& [peer, e] : *opened) cudaEventDestroy(e);
    opened->clear();
  }
}

void IpcRoute::destroy_exports() noexcept {
  for (cudaEvent_t* e : {&sent_, &consumed_}) {
    if (*e != nullptr) cudaEventDestroy(*e);
    *e = nullptr;
  }
}

}  // namespace distconv::internal
