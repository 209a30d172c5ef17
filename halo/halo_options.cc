#include "halo/halo_options.h"

namespace distconv {

const char* to_string(HaloTransport transport) {
  switch (transport) {
    case HaloTransport::kDefault:
      return "default";
    case HaloTransport::kSharedMemory:
      return "shared_memory";
    case HaloTransport::kPackedBuffers:
      return "packed_buffers";
    case HaloTransport::kMpiDatatypes:
      return "mpi_datatypes";
    case HaloTransport::kHostStaged:
      return "host_staged";
    case HaloTransport::kNccl:
      return "nccl";
    case HaloTransport::kCudaIpc:
      return "cuda_ipc";
  }
  return "unknown";
}

bool receives_in_flight(HaloTransport transport) {
  return transport == HaloTransport::kMpiDatatypes;
}

}  // namespace distconv
