// Reference linear interpolation (bilinear, trilinear; 1D too): plain loops
// over the whole tensor from InterpolateDesc's taps, the oracle of the
// distributed layer's tests and of distconv_bench --interp. Computes in
// double; float and double arrays.
//
// Arrays are dense row-major (N, C, spatial...); dst's shape is
// desc.dst_shape(src_shape). Outputs are overwritten.
//
//   const InterpolateDesc d = InterpolateDesc::of_size({10, 8});
//   const Shape x{2, 3, 5, 4};                      // y: {2, 3, 10, 8}
//   reference::interpolate_fwd(d, x, src, dst);
//   reference::interpolate_bwd(d, x, diff_dst, diff_src);
#ifndef DISTCONV_KERNELS_REFERENCE_INTERPOLATE_H_
#define DISTCONV_KERNELS_REFERENCE_INTERPOLATE_H_

#include "distconv/interpolate_desc.h"
#include "distconv/shape.h"

namespace distconv::reference {

// dst = each output cell's corners weighted by the taps' weights.
template <typename T>
void interpolate_fwd(const InterpolateDesc& desc, const Shape& src_shape,
                     const T* src, T* dst);

// diff_src = the adjoint: each output's gradient times the weights,
// summed into its corners.
template <typename T>
void interpolate_bwd(const InterpolateDesc& desc, const Shape& src_shape,
                     const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_INTERPOLATE_H_
