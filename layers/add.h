// Element-wise addition of distributed tensors (residual connections):
// dst = a + b, for tensors with the same Distribution, on each rank's
// shard alone (no communication; any grid, uneven and empty shards).
//
//   add(branch, skip, branch);              // branch += skip, in place
//   add_backward(diff_y, diff_branch, diff_skip);
//
// Like the activations (docs/elementwise.md), add acts on shard interiors:
// each tensor may carry any halo widths and either storage order, only its
// Distribution must match; halo cells are never read or written. dst may
// be a or b (the same tensor; other overlaps are undefined).
//
// Backward: y = a + b passes its gradient unchanged to both inputs,
// diff_a = diff_b = diff_dst. Nothing needs computing: a caller may hand
// diff_dst itself on to both branches. add_backward() copies it into
// diff_a and diff_b where they are other tensors (with other halos, say);
// a gradient arriving from two branches is summed with add().
//
// GPU memory: the same on DistTensor<T, DeviceSpace> (float, double;
// target //layers:device_add, built only with --config=cuda), one CUDA
// thread per element, queued on the stream of the Exec<DeviceSpace>
// (distconv/exec.h) passed last.
//
// A distribution mismatch throws the same kShapeMismatch on every rank
// (distributions are global information).
#ifndef DISTCONV_LAYERS_ADD_H_
#define DISTCONV_LAYERS_ADD_H_

#include "distconv/dist_tensor.h"
#include "distconv/exec.h"
#include "distconv/memory_space.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host and device
// memory.
template <typename T, typename Space>
void add(const DistTensor<T, Space>& a, const DistTensor<T, Space>& b,
         DistTensor<T, Space>& dst, const Exec<Space>& exec = {});

// diff_a = diff_b = diff_dst; either may be diff_dst itself (nothing is
// copied there).
template <typename T, typename Space>
void add_backward(const DistTensor<T, Space>& diff_dst,
                  DistTensor<T, Space>& diff_a, DistTensor<T, Space>& diff_b,
                  const Exec<Space>& exec = {});

}  // namespace distconv

#endif  // DISTCONV_LAYERS_ADD_H_
