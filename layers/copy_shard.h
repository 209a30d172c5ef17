// copy_shard: moves a distributed tensor's shards into another tensor of
// the same Distribution with other halos or storage order (what one layer
// leaves to what the next one plans for, where the two cannot share one
// layout; see "Sharing a tensor between layers" in docs/distribution.md).
// Each rank copies its own shard interior: no communication; halo cells of
// `to` are left as they are.
//
//   copy_shard(pool_out, conv_in);   // conv_in: conv.src_layout()
//
// A distribution mismatch throws the same kShapeMismatch on every rank.
//
// GPU memory (float and double; target //layers:device_copy_shard, built
// only with --config=cuda): the tensor overload on DistTensor<T,
// DeviceSpace>, one CUDA kernel queued on the stream of the
// Exec<DeviceSpace> (distconv/exec.h) passed last.
//
// The view overloads copy between this rank's shard interior and a tensor
// of the shard's extent held elsewhere with any strides (a framework's
// NCHW tensor, say; a zero stride broadcasts one value when reading). A
// view of another extent throws kShapeMismatch on the rank that passed it.
#ifndef DISTCONV_LAYERS_COPY_SHARD_H_
#define DISTCONV_LAYERS_COPY_SHARD_H_

#include "distconv/dist_tensor.h"
#include "distconv/exec.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h in host and device
// memory, and for int32_t, int64_t and uint8_t in host memory.
template <typename T, typename Space>
void copy_shard(const DistTensor<T, Space>& from, DistTensor<T, Space>& to,
                const Exec<Space>& exec = {});
// Host memory: float, double, bf16, fp16, int32_t, int64_t and uint8_t.
template <typename T>
void copy_shard(const StridedView<const T>& from, DistTensor<T>& to);
template <typename T>
void copy_shard(const DistTensor<T>& from, const StridedView<T>& to);

}  // namespace distconv

#endif  // DISTCONV_LAYERS_COPY_SHARD_H_
