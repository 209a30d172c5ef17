// Reference nearest-neighbour upsampling: plain loops, the oracle the
// distributed Upsample is tested against. Arrays are dense row-major (N, C,
// spatial...); 1 to 3 spatial dimensions; float and double.
//
//   const UpsampleDesc up{Shape{2, 2}};
//   const Shape x{1, 1, 2, 2}, y = up.dst_shape(x);       // {1, 1, 4, 4}
//   reference::upsample_fwd(up, x, src, dst);
#ifndef DISTCONV_KERNELS_REFERENCE_UPSAMPLE_H_
#define DISTCONV_KERNELS_REFERENCE_UPSAMPLE_H_

#include "distconv/shape.h"
#include "distconv/upsample_desc.h"

namespace distconv::reference {

// dst (desc.dst_shape(src_shape)) = src repeated: y[i] = x[i / f].
template <typename T>
void upsample_fwd(const UpsampleDesc& desc, const Shape& src_shape,
                  const T* src, T* dst);

// The adjoint: diff_src[i] = the sum of diff_dst over the block of outputs
// that copy cell i, in row-major order.
template <typename T>
void upsample_bwd(const UpsampleDesc& desc, const Shape& src_shape,
                  const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_UPSAMPLE_H_
