// Nearest upsampling's per-rank loops (layers/upsample.h) on strided (N, C,
// spatial...) views in host memory, on the host's execution context (the
// GPU's: the same calls in kernels/cuda/space_ops.h): forward copies each
// input cell's channels into its block of factor cells; backward sums each
// block's gradients into its input cell, in row-major order over the block.
// 16-bit types sum a row of input cells in fp32 and round once. The channel
// loops run as vector code where channels are contiguous (channels-last).
// The CUDA kernels (kernels/cuda/upsample_kernels.h) walk the same
// UpsampleGeometry. Defined for every element type of
// distconv/element_types.h.
//
//   UpsampleFactors f = upsample_factors(Shape{2, 2});
//   upsample_forward<float>(exec, f, x_shard, y_shard);  // y's extent is
//   upsample_backward<float>(exec, f, dy_shard, dx_shard);  // x's times f
#ifndef DISTCONV_KERNELS_LOCAL_UPSAMPLE_H_
#define DISTCONV_KERNELS_LOCAL_UPSAMPLE_H_

#include "distconv/exec.h"
#include "distconv/strided_view.h"
#include "kernels/upsample_geometry.h"

namespace distconv {

// dst(n, c, o...) = src(n, c, o / f...).
template <typename T>
void upsample_forward(const Exec<HostSpace>& exec,
                      const UpsampleFactors& factors,
                      const StridedView<const T>& src,
                      const StridedView<T>& dst);

// diff_src(n, c, i...) = the sum of diff_dst over i's block (written, not
// added to).
template <typename T>
void upsample_backward(const Exec<HostSpace>& exec,
                       const UpsampleFactors& factors,
                       const StridedView<const T>& diff_dst,
                       const StridedView<T>& diff_src);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_UPSAMPLE_H_
