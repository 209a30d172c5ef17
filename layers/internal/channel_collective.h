// Internal: the two collectives of channel and filter parallelism, over the
// ranks that hold the same cells in every dimension but channels (a
// ProcessGrid::along(1) communicator; member i holds channel block i).
//
// Every member has the same `positions` (the non-channel cells of its box,
// halos included) and its own block of channels. Buffers are dense and
// channels-last: a block is positions x (its channels), a full buffer
// positions x (all channels), the channel index fastest.
//
//   allgather:      each member's block -> every member's full buffer
//   reduce_scatter: every member's full buffer of partial sums -> each
//                   member's block of the sums
//
// Each is the other's adjoint. Both are blocking MPI collectives with exact
// counts (MPI_Allgatherv, MPI_Reduce_scatter), staged through one buffer of
// blocks, member after member. Host memory; DeviceChannelCollective
// (device_channel_collective.h) runs them on GPU memory.
//
//   ChannelCollective<float> gather(grid.along(1), dist.partition(1), cells);
//   gather.allgather(x.buffer().data(), x_full.data());
#ifndef DISTCONV_LAYERS_INTERNAL_CHANNEL_COLLECTIVE_H_
#define DISTCONV_LAYERS_INTERNAL_CHANNEL_COLLECTIVE_H_

#include <mpi.h>

#include <vector>

#include "distconv/box.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/shape.h"

namespace distconv::internal {

// Defined for every element type of distconv/element_types.h (16-bit types
// summed in fp32, rounded per sum).
template <typename T>
class ChannelCollective {
 public:
  // `comm` (not duplicated; it must outlive this) has one member per part
  // of `channels`, in order. Throws kUnsupported when a block holds more
  // than INT_MAX elements (MPI's counts are int).
  ChannelCollective(MPI_Comm comm, const BlockPartition& channels,
                    Index positions);

  Index positions() const { return positions_; }
  Index full_size() const { return positions_ * channels_.extent(); }
  Index block_size() const;  // this member's

  // full = every member's block, at its channels.
  void allgather(const T* block, T* full);
  // block = the sum over members of their `full`, at this member's channels.
  void reduce_scatter(const T* full, T* block);

 private:
  // A full buffer as a (positions, channels) array, and `member`'s block
  // of it.
  Shape full_shape() const;
  Box block_box(int member) const;

  MPI_Comm comm_;
  int member_ = 0;
  BlockPartition channels_;
  Index positions_;
  std::vector<int> counts_, displs_;  // per member, in elements
  std::vector<T> staging_;            // the blocks, member after member
  SumOp<T> sum_;
};

// Sends `n_send` elements of `send` to rank `to` of `comm` while receiving
// `n_recv` into `recv` from rank `from` (host memory; the counts must fit
// MPI's int, as the convolution checks when it is made). Defined for
// float, double, bf16 and fp16.
template <typename T>
void sendrecv(MPI_Comm comm, const T* send, Index n_send, int to, T* recv,
              Index n_recv, int from);

}  // namespace distconv::internal

namespace distconv {

// The same in a memory space's context, what code written once for every
// space calls (found by argument-dependent lookup on the context): here
// on host arrays; on device arrays in device_channel_collective.h.
template <typename T>
void sendrecv(const Exec<HostSpace>&, MPI_Comm comm, const T* send,
              Index n_send, int to, T* recv, Index n_recv, int from) {
  internal::sendrecv(comm, send, n_send, to, recv, n_recv, from);
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_CHANNEL_COLLECTIVE_H_
