// The halo exchanges' settings. Per call (HaloExchangeOptions): forward
// (owners' cells into the halos that read them) or reverse (halo
// contributions summed, or maxed, into their owners); shared by the host
// exchange (halo_exchange.h) and the GPU one (device_halo_exchange.h). At
// construction (HaloExchangeConfig): how the host exchange's messages
// travel. A small header, so that layers' options can name them without
// including an exchange.
#ifndef DISTCONV_HALO_HALO_OPTIONS_H_
#define DISTCONV_HALO_HALO_OPTIONS_H_

#include <mpi.h>

namespace distconv {

enum class HaloDirection { kForward, kReverse };
enum class HaloReduction { kSum, kMax };

struct HaloExchangeOptions {
  HaloDirection direction = HaloDirection::kForward;
  HaloReduction reduction = HaloReduction::kSum;  // used by kReverse only
};

// How message data leaves and enters the tensor's buffer (both are tested
// on every grid; docs/performance.md compares them).
enum class HaloTransport {
  // Ranks that share memory (an MPI-3 shared window) pack straight into the
  // receiver's inbox and tell it with a zero-byte message; other peers get
  // packed point-to-point messages. The default: the fastest on one node.
  kSharedMemory,
  // distconv packs each box into its own contiguous buffer, sends it with
  // MPI point-to-point and unpacks it on arrival (what device memory uses).
  kPackedBuffers,
  // MPI subarray datatypes read and write the tensor directly, leaving the
  // packing to the MPI library.
  kMpiDatatypes,
};

// Whether an exchange over `transport` writes received halo cells into the
// tensor while it is in flight (kMpiDatatypes: MPI receives straight into
// the buffer). The others write them in wait(), so halo cells may be read,
// stale, until then.
bool receives_in_flight(HaloTransport transport);

struct HaloExchangeConfig {
  HaloTransport transport = HaloTransport::kSharedMemory;
  // kSharedMemory: the ranks that may share memory, a communicator of ranks
  // of the grid; MPI_COMM_NULL means those on the same node.
  MPI_Comm shared_memory_comm = MPI_COMM_NULL;
};

}  // namespace distconv

#endif  // DISTCONV_HALO_HALO_OPTIONS_H_
