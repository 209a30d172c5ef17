// Redistribution ("shuffle"): moves a distributed tensor from one
// distribution to another over the same ranks: another grid shape (samples
// <-> space, 1x1x4x1 <-> 1x1x2x2 <-> 4x1x1x1), other halo widths, another
// storage order, uneven or empty shards. What one layer leaves to the next
// when they split the tensor differently (copy_shard.h when only halos or
// storage order differ).
//
// The plan is index math done once, at construction: for every peer, the
// box where my source shard meets its destination shard (what I send) and
// where my destination shard meets its source shard (what I receive).
// forward() sends each element straight from the rank that holds it to the
// rank that needs it, at most once: one point-to-point message per peer
// with a non-empty box (exact counts, no message to the others), no root in
// between. Elements that stay on a rank are copied locally without MPI.
// Only shard interiors move: halo cells of the destination are left as they
// are. backward() is the same move in the other direction; since the move
// is a permutation of the elements, that is its adjoint.
//
//   ProcessGrid samples(MPI_COMM_WORLD, Shape{4, 1, 1, 1});
//   ProcessGrid space(MPI_COMM_WORLD, Shape{1, 1, 2, 2});
//   const Shape global{8, 16, 256, 256};
//   HaloLayout from(Distribution(global, samples.shape()));
//   HaloLayout to(Distribution(global, space.shape()),
//                 HaloWidths::symmetric({0, 0, 1, 1}));
//   Redistribution<float> shuffle(samples, from, space, to);
//   DistTensor<float> x(samples, from), y(space, to);
//   shuffle.forward(x, y);             // y: x split over H and W
//   shuffle.backward(dy, dx);          // gradients go back the same way
//
// Gathering onto, or scattering from, some of the ranks is a redistribution
// to or from a distribution that gives the other ranks empty shards
// (BlockPartition::from_sizes with zeros):
//
//   // 4 ranks; the whole tensor onto rank 1 (grid 1x1x4x1, H to part 1).
//   const Distribution on_rank_1({BlockPartition::balanced(8, 1),
//                                 BlockPartition::balanced(16, 1),
//                                 BlockPartition::from_sizes({0, 256, 0, 0}),
//                                 BlockPartition::balanced(256, 1)});
//   ProcessGrid rows(MPI_COMM_WORLD, on_rank_1.grid_shape());
//   Redistribution<float> gather(space, to, rows, HaloLayout(on_rank_1));
//   // Onto ranks 1 and 3, half the rows each: from_sizes({0, 128, 0, 128}).
//   // backward() (or a plan the other way round) scatters from them.
//
// Construction is collective over the ranks and validated together: grids
// over other ranks (or the same ranks in another order), layouts of
// different global shapes, a layout that does not lie over its grid, or a
// message beyond MPI's int count throw the same distconv::Error on every
// rank. A tensor whose layout is not the plan's, on any rank, throws the
// same kShapeMismatch on every rank (naming that rank) before any message
// moves.
//
// The plan duplicates the source grid's communicator (its messages never
// mix with others) and holds one send and one receive buffer, each sized by
// the elements this rank sends to / receives from other ranks.
//
// GPU memory (Redistribution<T, DeviceSpace>; float and double; target
// //layers:device_redistribute, built only with --config=cuda): the same
// plan and messages on DistTensor<T, DeviceSpace>. Messages are packed on
// the GPU into one device buffer, staged through the host for MPI, and
// unpacked on the GPU, all ordered on the stream of the layer's
// Exec<DeviceSpace> (distconv/exec.h), its last argument, after
// the work queued there before: forward() and backward() may return with
// the source still being read and the destination written on that stream
// (work queued after them there sees the result).
#ifndef DISTCONV_LAYERS_REDISTRIBUTE_H_
#define DISTCONV_LAYERS_REDISTRIBUTE_H_

#include <mpi.h>

#include <memory>
#include <vector>

#include "distconv/box.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/process_grid.h"

namespace distconv {

// One message of a redistribution: the box (global coordinates) that moves
// between this rank and `peer`.
struct RedistributionMessage {
  int peer;
  Box box;
};

// What part `part` sends, receives and keeps when a tensor moves from
// distribution `from` to `to` (same global shape and number of parts).
// Pure index math. Messages are ordered by peer; empty ones are left out.
struct RedistributionPlan {
  // To peer p: intersect(from.shard(part), to.shard(p)).
  std::vector<RedistributionMessage> sends;
  // From peer p: intersect(to.shard(part), from.shard(p)).
  std::vector<RedistributionMessage> recvs;
  // intersect(from.shard(part), to.shard(part)): copied without MPI. Its
  // lower corner is meaningless when it is empty.
  Box kept;
  Index send_volume() const;
  Index recv_volume() const;
};
RedistributionPlan plan_redistribution(const Distribution& from,
                                       const Distribution& to, int part);

// Defined for every element type of distconv/element_types.h in host and device
// memory, and for int32_t, int64_t and uint8_t (labels, masks) in host memory
// (cells are copied, never summed).
template <typename T, typename Space = HostSpace>
class Redistribution {
 public:
  // Collective over the ranks of both grids, which must be the same ranks
  // in the same order (e.g. both made from one communicator).
  Redistribution(const ProcessGrid& src_grid, const HaloLayout& src_layout,
                 const ProcessGrid& dst_grid, const HaloLayout& dst_layout,
                 const Exec<Space>& exec = {});
  ~Redistribution();
  Redistribution(Redistribution&& other) noexcept;
  Redistribution& operator=(Redistribution&& other) noexcept;
  Redistribution(const Redistribution&) = delete;
  Redistribution& operator=(const Redistribution&) = delete;

  const HaloLayout& src_layout() const { return src_layout_; }
  const HaloLayout& dst_layout() const { return dst_layout_; }
  // This rank's part of the forward move (backward: sends and receives
  // swap).
  const RedistributionPlan& plan() const { return plan_; }

  // dst's shard interior = the elements of src's shard interiors. Collective.
  // kShapeMismatch if a tensor's layout is not the plan's, kState once the
  // plan was moved from (both checks are the same on every rank).
  void forward(const DistTensor<T, Space>& src, DistTensor<T, Space>& dst);
  // The reverse move (the adjoint of forward): src_grad's interior = the
  // elements of dst_grad's interiors. Collective.
  void backward(const DistTensor<T, Space>& dst_grad,
                DistTensor<T, Space>& src_grad);

 private:
  // Sends `out` boxes of `from` (packed in from's storage order), receives
  // `in` boxes into `to`, copies `plan_.kept`.
  // Offsets of the messages in the buffers: `out_off` and `in_off` have one
  // more entry than `out` and `in`. Device memory: `out_dev` and `in_dev`
  // are the device buffers the messages are packed in and unpacked from.
  void move(const std::vector<RedistributionMessage>& out,
            const std::vector<Index>& out_off,
            const std::vector<RedistributionMessage>& in,
            const std::vector<Index>& in_off,
            const DistTensor<T, Space>& from, DistTensor<T, Space>& to,
            T* out_buf, T* in_buf, T* out_dev, T* in_dev);
  // Posts the receives and sends of the buffers' messages.
  void post(const std::vector<RedistributionMessage>& out,
            const std::vector<Index>& out_off,
            const std::vector<RedistributionMessage>& in,
            const std::vector<Index>& in_off, T* out_buf, T* in_buf);
  void require_not_moved_from() const;  // kState
  void release() noexcept;

  HaloLayout src_layout_;
  HaloLayout dst_layout_;
  RedistributionPlan plan_;
  Exec<Space> exec_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<Index> send_off_, recv_off_;  // of plan_.sends, plan_.recvs
  // Host memory: the messages. Device memory: their host staging.
  std::vector<T> send_buf_;  // forward: packed sends; backward: receives
  std::vector<T> recv_buf_;  // forward: receives; backward: packed sends
  // Device memory only: the sends' then the receives' packed messages.
  std::unique_ptr<void, void (*)(void*)> device_buf_{nullptr,
                                                     &Space::deallocate};
  std::vector<MPI_Request> requests_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_REDISTRIBUTE_H_
