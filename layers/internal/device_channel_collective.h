// Internal: DeviceChannelCollective<T>, the collectives of channel and
// filter parallelism (ChannelCollective, channel_collective.h) on GPU
// memory, queued on a stream. Over NCCL (given a communicator) the host
// never waits: the blocks travel by grouped ncclBroadcast (allgather) and
// ncclReduce (reduce_scatter, summed by NCCL in T), through a device
// buffer of blocks, member after member, and strided device copies
// (cudaMemcpy2DAsync) place each block at its channels. Without one, each
// copies its input to the host on the stream, waits for it, runs the host
// collective there and queues the result's copy back to the device.
// sendrecv on an Exec<DeviceSpace> does the latter for one exchange
// between two members.
// Built only with --config=cuda.
//
//   DeviceChannelCollective<float> gather(stream, grid.along(1),
//                                         dist.partition(1), cells, nccl);
//   gather.allgather(x.buffer().data(), x_full.buffer().data());
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <vector>

#include "distconv/device_space.h"
#include "distconv/distribution.h"
#include "distconv/shape.h"
#include "layers/internal/channel_collective.h"

namespace distconv::internal {

// Defined for every element type of distconv/element_types.h.
template <typename T>
class DeviceChannelCollective {
 public:
  // As ChannelCollective's; the work is queued on `stream`. `nccl`: a
  // communicator over comm's ranks in the same order (kept by the
  // caller), or null for MPI on host copies. Collective over `comm`.
  DeviceChannelCollective(cudaStream_t stream, MPI_Comm comm,
                          const BlockPartition& channels, Index positions,
                          ncclComm_t nccl);

  // As ChannelCollective's, on device arrays. Over NCCL, queued on the
  // stream; else waits for the stream (the input's producers) before the
  // collective, and the output's copy is queued on the stream.
  void allgather(const T* block, T* full);
  void reduce_scatter(const T* full, T* block);

 private:
  // Over NCCL: calls fn(member, block, first channel, channels) for each
  // member's non-empty block in the device buffer of blocks.
  template <typename Fn>
  void for_each_block(Fn fn) const;
  // Within one NCCL group: call(member, block, elements) for each
  // non-empty block, an ncclResult_t each; throws Error(kDevice) naming
  // `what` for the first failure, once the group is ended.
  template <typename Call>
  void nccl_group(const char* what, Call call) const;
  // Queues a copy of positions() rows of `width` elements between buffers
  // whose rows are `to_pitch` and `from_pitch` elements apart.
  void copy_rows(T* to, Index to_pitch, const T* from, Index from_pitch,
                 Index width) const;
  T* blocks() const { return static_cast<T*>(blocks_.get()); }

  cudaStream_t stream_;
  ChannelCollective<T> host_;
  ncclComm_t nccl_;
  int member_ = 0;
  BlockPartition channels_;
  DeviceBuffer blocks_;          // over NCCL: the blocks, member after member
  std::vector<T> block_, full_;  // else: host staging
};

}  // namespace distconv::internal

namespace distconv {

// sendrecv (channel_collective.h) on device arrays, staged through the
// host: waits for the context's stream before sending, and for the
// received elements' copy to the device.
template <typename T>
void sendrecv(const Exec<DeviceSpace>& exec, MPI_Comm comm, const T* send,
              Index n_send, int to, T* recv, Index n_recv, int from);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_CHANNEL_COLLECTIVE_H_
