// Concat<T> and Slice<T>: joining tensors along channels (U-Net skip
// connections) and taking a channel range back out, on tensors split over
// a ProcessGrid along N and spatial dimensions. Describe, plan
// (plan_concat and plan_slice in shard_plan.h, or the constructors),
// execute (forward, backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2});
//   Distribution skip(Shape{1, 32, 256, 256}, grid.shape());
//   Distribution up(Shape{1, 64, 256, 256}, grid.shape());
//   Concat<float> cat(grid, {skip, up});           // 96 channels
//   DistTensor<float> y(grid, next_conv.src_layout());  // halos welcome
//   cat.forward({&skip_t, &up_t}, y);
//   cat.backward(diff_y, {&diff_skip, &diff_up});  // the gradient, sliced
//
//   Slice<float> first(grid, ChannelRange{0, 16}, skip);  // 16 of 32
//   first.forward(skip_t, piece);
//   first.backward(diff_piece, diff_skip);   // zeros outside [0, 16)
//
// The inputs of a concatenation share the split of N and of every spatial
// dimension (their channel counts may differ); the output has it too, with
// the channels summed. A rank's output shard is its input shards side by
// side, so nothing is communicated. Channels must not be split over the
// grid (kUnsupported).
//
// Every tensor is read and written through its shard interior: it may
// carry any halo widths and either storage order (the next convolution's
// src_layout() for the output, say); only its Distribution must be the
// plan's. Halo cells are never read or written. The plan's layouts are the
// plain choice: no halos, channels-last.
//
// Concat's backward is the slicing of diff_dst into the inputs' channel
// ranges, Slice's backward the adjoint of slicing: diff_dst in the range,
// zeros in the other channels of diff_src (OtherChannels::kZero), or the
// other channels left as they are (kKeep, so that several slices of one
// tensor each fill their part of one gradient).
//
// GPU memory (Concat<T, DeviceSpace>, Slice<T, DeviceSpace>; float and
// double; target //layers:device_concat, built only with --config=cuda):
// the same on DistTensor<T, DeviceSpace>, one CUDA kernel per input (or
// channel range), one thread per element, queued on the stream of the
// layer's Exec<DeviceSpace> (distconv/exec.h), its last argument.
//
// Validation uses global information only (distributions, ranges), so bad
// input throws the same distconv::Error on every rank.
#ifndef DISTCONV_LAYERS_CONCAT_H_
#define DISTCONV_LAYERS_CONCAT_H_

#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/exec.h"
#include "distconv/halo_layout.h"
#include "distconv/memory_space.h"
#include "distconv/process_grid.h"
#include "layers/shard_plan.h"  // ChannelRange, OtherChannels

namespace distconv {

// Defined for every element type of distconv/element_types.h in host and device
// memory.
template <typename T, typename Space = HostSpace>
class Concat {
 public:
  // The inputs' distributions, in output channel order (at least one).
  Concat(const ProcessGrid& grid, const std::vector<Distribution>& srcs,
         const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_concat; checked on every rank
  // together (made for this rank and grid).
  Concat(const ProcessGrid& grid, ShardPlan plan, const Exec<Space>& exec = {});

  int num_srcs() const { return static_cast<int>(plan_.tensors.size()) - 1; }
  const Distribution& src_distribution(int i) const;
  const Distribution& dst_distribution() const {
    return dst_layout().distribution();
  }
  // Where input i's channels sit in the output.
  ChannelRange channels(int i) const;
  // Plain layouts (no halos, channels-last); any layout with the same
  // distribution does as well.
  const HaloLayout& src_layout(int i) const;
  const HaloLayout& dst_layout() const { return plan_.layout("dst"); }
  const ShardPlan& plan() const { return plan_; }

  // dst = the srcs side by side along channels.
  void forward(const std::vector<const DistTensor<T, Space>*>& srcs,
               DistTensor<T, Space>& dst) const;
  // diff_srcs[i] = channels(i) of diff_dst.
  void backward(const DistTensor<T, Space>& diff_dst,
                const std::vector<DistTensor<T, Space>*>& diff_srcs) const;

 private:
  ShardPlan plan_;
  std::vector<Index> offsets_;  // num_srcs() + 1 channel offsets
  Exec<Space> exec_;
};

// Defined for every element type of distconv/element_types.h in host and device
// memory.
template <typename T, typename Space = HostSpace>
class Slice {
 public:
  // 0 <= range.begin <= range.end <= C of `src`.
  Slice(const ProcessGrid& grid, const ChannelRange& range,
        const Distribution& src, const Exec<Space>& exec = {});
  // Runs a plan made beforehand by plan_slice(range, ...); checked on every
  // rank together (made for this rank, grid and range).
  Slice(const ProcessGrid& grid, const ChannelRange& range, ShardPlan plan,
        const Exec<Space>& exec = {});

  const ChannelRange& range() const { return range_; }
  const Distribution& src_distribution() const {
    return src_layout().distribution();
  }
  const Distribution& dst_distribution() const {
    return dst_layout().distribution();
  }
  // Plain layouts (no halos, channels-last); any layout with the same
  // distribution does as well.
  const HaloLayout& src_layout() const { return plan_.layout("src"); }
  const HaloLayout& dst_layout() const { return plan_.layout("dst"); }
  const ShardPlan& plan() const { return plan_; }

  // dst = channels range() of src.
  void forward(const DistTensor<T, Space>& src,
               DistTensor<T, Space>& dst) const;
  // Channels range() of diff_src = diff_dst; the others as `other` says.
  void backward(const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>& diff_src,
                OtherChannels other = OtherChannels::kZero) const;

 private:
  ChannelRange range_;
  ShardPlan plan_;
  Exec<Space> exec_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CONCAT_H_
