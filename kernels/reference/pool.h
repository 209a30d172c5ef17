// Reference pooling kernels: plain loops, the oracle every distributed and
// oneDNN pooling is tested against. 2D and 3D; max, average including and
// excluding padding (PoolDesc says what each means); float and double.
//
// Arrays are dense row-major (N, C, spatial...). Shapes are checked with
// PoolDesc::validate and against each other; outputs are overwritten.
//
//   PoolDesc pool = PoolDesc::make(PoolKind::kMax, {2, 2});
//   const Shape x{1, 1, 4, 4}, y = pool.dst_shape(x);     // {1, 1, 2, 2}
//   reference::pool_fwd(pool, x, src, y, dst);
#ifndef DISTCONV_KERNELS_REFERENCE_POOL_H_
#define DISTCONV_KERNELS_REFERENCE_POOL_H_

#include "distconv/pool_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

// Max pooling picks as PyTorch does: the window's first cell, replaced by
// any later cell holding a larger value or a NaN; so the first of equal
// maxima, the last NaN of a window holding some (the result is NaN), the
// first cell of a window of -Inf only (the result is -Inf).
template <typename T>
void pool_fwd(const PoolDesc& desc, const Shape& src_shape, const T* src,
              const Shape& dst_shape, T* dst);

// diff_src = the gradient of pool_fwd: the adjoint for the averages; for
// max, each output's gradient goes to the cell its forward picked (from
// src, which max pooling reads; the averages ignore it).
template <typename T>
void pool_bwd(const PoolDesc& desc, const Shape& src_shape, const T* src,
              const Shape& dst_shape, const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_POOL_H_
