// The halo exchange's settings, in two structs named for when they apply.
//
//   HaloSetupOptions  fixed at construction: how messages travel (the
//                     transport) and the resources it uses (a shared-memory
//                     group, an NCCL communicator; the CUDA stream is the
//                     exchange's Exec<DeviceSpace>, distconv/exec.h).
//   HaloCallOptions   given to each start()/exchange(): forward (owners'
//                     cells into the halos that read them) or reverse (halo
//                     contributions summed, or maxed, into their owners).
//
// One set for host and device memory (halo_exchange.h). A small header with
// no CUDA include, so that layers' options can name them without including
// an exchange.
#ifndef DISTCONV_HALO_HALO_OPTIONS_H_
#define DISTCONV_HALO_HALO_OPTIONS_H_

#include <mpi.h>

// NCCL's handle type, declared here so that this header needs no NCCL
// header: an ncclComm_t is an ncclComm*.
struct ncclComm;

namespace distconv {

enum class HaloDirection { kForward, kReverse };
enum class HaloReduction { kSum, kMax };

struct HaloCallOptions {
  HaloDirection direction = HaloDirection::kForward;
  HaloReduction reduction = HaloReduction::kSum;  // used by kReverse only
};

// How message data leaves and enters the tensor's buffer. The first three
// move host memory, the last three device memory; an exchange refuses one
// made for the other memory space. Every transport of a space is tested on
// every grid, with the same results bit for bit; docs/performance.md
// compares the host ones.
enum class HaloTransport {
  // The memory space's default: kSharedMemory for host memory,
  // kHostStaged for device memory.
  kDefault,
  // Host. Ranks that share memory (an MPI-3 shared window) pack straight
  // into the receiver's inbox and tell it with a zero-byte message; other
  // peers get packed point-to-point messages. The fastest on one node.
  kSharedMemory,
  // Host. Each box is packed into its own contiguous buffer, sent with MPI
  // point-to-point and unpacked on arrival.
  kPackedBuffers,
  // Host. MPI subarray datatypes read and write the tensor directly,
  // leaving the packing to the MPI library.
  kMpiDatatypes,
  // Device. Boxes are packed on the GPU, copied to pinned host buffers and
  // sent with MPI point-to-point, then copied back. Works with any MPI and
  // with several ranks on one GPU. start() blocks the host until the pack
  // is copied out; wait() until MPI has delivered.
  kHostStaged,
  // Device. ncclSend/ncclRecv of the packed device buffers: no host
  // synchronisation at all. Needs one GPU per rank (construction says so,
  // on every rank, where ranks share one).
  kNccl,
  // Device. Each rank's GPU copies its packed cells straight into the
  // receiver's device buffer, opened through CUDA IPC; interprocess events
  // order the copies, zero-byte MPI messages order the events (the host
  // waits for a peer's message, never for the GPU: start() waits until the
  // receivers are done with the previous exchange in that direction).
  // Needs every rank on one node (construction says so, on every rank);
  // several ranks may share a GPU, ranks on different GPUs use peer
  // access.
  kCudaIpc,
};

// "shared_memory", "packed_buffers", ... ("default" for kDefault).
const char* to_string(HaloTransport transport);

// Whether an exchange over `transport` writes received halo cells into the
// tensor while it is in flight (kMpiDatatypes: MPI receives straight into
// the buffer). The others write them in wait(), so halo cells may be read,
// stale, until then.
bool receives_in_flight(HaloTransport transport);

struct HaloSetupOptions {
  HaloTransport transport = HaloTransport::kDefault;
  // kSharedMemory: the ranks that may share memory, a communicator of ranks
  // of the grid (those of it on this rank's node do); MPI_COMM_NULL means
  // every rank on the same node.
  MPI_Comm shared_memory_comm = MPI_COMM_NULL;
  // kNccl: a communicator (an ncclComm_t) over the grid's ranks with the
  // grid's rank numbering, owned by the caller (a framework's). Null: the
  // exchange makes one from the grid's communicator, collectively, and
  // frees it.
  ncclComm* nccl_comm = nullptr;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_OPTIONS_H_
