// The CUDA kernels of the losses on GPU memory (Loss<T, DeviceSpace>),
// running kernels/channel_cells.h's cell functions (the host loops' own
// code, in double), queued on `stream`. Targets are class indices
// (Target = std::int64_t) or values (Target = T). Defined for float,
// double, bf16 and fp16. Throw Error(kDevice) if a launch fails. Built
// only with --config=cuda.
#ifndef DISTCONV_KERNELS_CUDA_LOSS_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_LOSS_KERNELS_H_

#include "distconv/bf16.h"
#include "distconv/shape.h"
#include "kernels/channel_cells.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// The blocks per sample launch_loss_sums runs over `walk`; its partials
// hold 3 doubles per block and sample.
Index loss_sums_blocks(const CellWalk<2>& walk);

// Per sample n and block b < loss_sums_blocks(walk):
// partials[(n * blocks + b) * 3 + k] = the block's sum of the cells' loss
// (k = 0), count (1) and bad class indices (2); block b takes the
// sample's cells b * 256 + i + j * blocks * 256 and adds them up in a fixed
// order (no atomics), so the same data gives the same sums bit for bit.
// Adding each sample's partials in block order finishes its sums. Walk
// views: x, t. Nothing runs when the walk has no cell.
template <typename T, typename Target>
void launch_loss_sums(const LossCellDesc& desc, LossTerms what,
                      const CellWalk<2>& walk, const T* x, const Target* t,
                      double* partials, CUstream_st* stream);

// dx = the gradient of the loss scaled by w, one thread per cell; walk
// views: dx, x, t. dx may be x.
template <typename T, typename Target>
void launch_loss_gradient(const LossCellDesc& desc, double w,
                          const CellWalk<3>& walk, T* dx, const T* x,
                          const Target* t, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_LOSS_KERNELS_H_
