// Reference softmax and log-softmax over the channel dimension: plain loops,
// the oracle of the distributed softmax. 2D and 3D; float and double
// (computed in double).
//
// Arrays are dense row-major (N, C, spatial...); every (n, spatial) cell's C
// values are normalised on their own (SoftmaxKind says how). Outputs are
// overwritten.
//
//   const Shape x{2, 10, 8, 8};
//   reference::softmax_fwd(SoftmaxKind::kSoftmax, x, src, dst);
//   reference::softmax_bwd(SoftmaxKind::kSoftmax, x, dst, diff_dst, diff_src);
#ifndef DISTCONV_KERNELS_REFERENCE_SOFTMAX_H_
#define DISTCONV_KERNELS_REFERENCE_SOFTMAX_H_

#include "distconv/loss_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

// dst = softmax(src) or log-softmax(src) over C, with the maximum
// subtracted first (no overflow).
template <typename T>
void softmax_fwd(SoftmaxKind kind, const Shape& shape, const T* src, T* dst);

// diff_src = J^T diff_dst, from the forward's output dst:
//   softmax:     diff_src_c = y_c (dy_c - sum_k dy_k y_k)
//   log-softmax: diff_src_c = dy_c - exp(y_c) sum_k dy_k
template <typename T>
void softmax_bwd(SoftmaxKind kind, const Shape& shape, const T* dst,
                 const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_SOFTMAX_H_
