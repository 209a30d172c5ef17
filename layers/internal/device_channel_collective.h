// Internal: DeviceChannelCollective<T>, the collectives of channel and
// filter parallelism (ChannelCollective, channel_collective.h) on GPU
// memory: each copies its input to the host on the stream, waits for it,
// runs the host collective there and queues the result's copy back to the
// device on the stream. staged_sendrecv does the same for one exchange
// between two members. Built only with --config=cuda.
//
//   DeviceChannelCollective<float> gather(stream, grid.along(1),
//                                         dist.partition(1), cells);
//   gather.allgather(x.buffer().data(), x_full.buffer().data());
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <vector>

#include "distconv/distribution.h"
#include "distconv/shape.h"
#include "layers/internal/channel_collective.h"

namespace distconv::internal {

// Defined for float, double, bf16 and fp16.
template <typename T>
class DeviceChannelCollective {
 public:
  // As ChannelCollective's; the copies are queued on `stream`.
  DeviceChannelCollective(cudaStream_t stream, MPI_Comm comm,
                          const BlockPartition& channels, Index positions);

  // As ChannelCollective's, on device arrays. Waits for the stream (the
  // input's producers) before the collective; the output's copy is queued
  // on the stream.
  void allgather(const T* block, T* full);
  void reduce_scatter(const T* full, T* block);

 private:
  cudaStream_t stream_;
  ChannelCollective<T> host_;
  std::vector<T> block_, full_;  // host staging
};

// sendrecv (channel_collective.h) on device arrays, staged through the
// host: waits for the stream before sending, and for the received
// elements' copy to the device.
template <typename T>
void staged_sendrecv(cudaStream_t stream, MPI_Comm comm, const T* send,
                     Index n_send, int to, T* recv, Index n_recv, int from);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_
