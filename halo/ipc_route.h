// Internal: one direction of the kCudaIpc halo transport
// (device_transport.cc). Each outgoing message is copied by this rank's
// GPU straight into the receiver's device buffer, opened through CUDA IPC
// (ranks on one node: several may share a GPU; different GPUs reach each
// other through peer access). Interprocess events order the copies with
// the receivers' work, and zero-byte MPI messages ("tokens") order the
// events' records with the waits on them:
//
//   sender                                  receiver
//   send():  waits for the receiver's
//            "free" token of the last
//            exchange, its stream waits
//            for the receiver's `consumed`
//            event; copies; records `sent`;
//            sends a "sent" token      --->  receive(): takes the token, its
//                                            stream waits for `sent`
//                                            (unpack, on that stream)
//            <--- "free" token         ---   release(): records `consumed`
//
// Built only with --config=cuda.
#ifndef DISTCONV_HALO_IPC_ROUTE_H_
#define DISTCONV_HALO_IPC_ROUTE_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstddef>
#include <map>
#include <vector>

#include "distconv/shape.h"
#include "halo/halo_plan.h"

namespace distconv::internal {

class IpcRoute {
 public:
  // One direction of an exchange. Collective over `comm` (the transport's,
  // whose ranks must all be on this node: kUnsupported on every rank
  // otherwise); throws as run_collectively does. This rank sends `out`
  // from `out_cells` and receives `in` into `in_cells`, message i at
  // element offset out_off[i] (in_off[i]) of `element_bytes` bytes each.
  // `in_cells` is the base of its own cudaMalloc allocation (IPC exports
  // whole allocations). Messages are matched by (peer, tag + tag_offset),
  // as the host-staged transport matches them.
  IpcRoute(MPI_Comm comm, const std::vector<HaloMessage>& out,
           const std::vector<HaloMessage>& in,
           const std::vector<Index>& out_off, const std::vector<Index>& in_off,
           std::size_t element_bytes, const void* out_cells, void* in_cells,
           int tag_offset);
  ~IpcRoute();
  IpcRoute(const IpcRoute&) = delete;
  IpcRoute& operator=(const IpcRoute&) = delete;

  // Queues the copies of the packed messages (on `copy_stream`, after
  // what is queued there: their packing) into the receivers' buffers, once
  // each receiver has released its buffer from the last exchange (the host
  // waits for its token), and tells the receivers.
  void send(cudaStream_t copy_stream);
  // Waits (the host) for every sender's token and makes `stream` wait for
  // their copies.
  void receive(cudaStream_t stream);
  // After the arrivals' use is queued on `stream`: tells the senders their
  // space in in_cells is free once `stream` gets there.
  void release(cudaStream_t stream);
  // After start() threw: where it threw inside send(), the tokens no
  // longer match, and the destructor no longer meets the peers.
  void abandon() noexcept;

 private:
  struct Link {  // one message
    int peer = 0;
    int tag = 0;                        // the plan's tag + tag_offset
    std::size_t offset = 0, bytes = 0;  // in this rank's buffer
    void* remote = nullptr;             // out: where it lands
    cudaEvent_t event = nullptr;        // out: the receiver's `consumed`;
                                        // in: the sender's `sent`
  };
  void exchange_handles();
  void* open_buffer(int peer, const cudaIpcMemHandle_t& handle);
  cudaEvent_t open_event(std::map<int, cudaEvent_t>& opened, int peer,
                         const cudaIpcEventHandle_t& handle, cudaEvent_t own);
  void close_imports() noexcept;    // the peers' buffers and events
  void destroy_exports() noexcept;  // this rank's events

  MPI_Comm comm_;
  int rank_ = 0;
  bool sending_ = false;    // inside send()
  bool abandoned_ = false;  // a send() cut short: tokens are unmatched
  const char* out_cells_;
  char* in_cells_;
  std::vector<Link> out_, in_;
  cudaEvent_t sent_ = nullptr, consumed_ = nullptr;  // this rank's
  std::map<int, void*> buffers_;                     // peers' in_cells, opened
  std::map<int, cudaEvent_t> consumed_events_, sent_events_;  // opened
  long long sends_ = 0;  // exchanges sent so far
  std::vector<MPI_Request> sent_tokens_, free_tokens_;
};

}  // namespace distconv::internal

#endif  // DISTCONV_HALO_IPC_ROUTE_H_
