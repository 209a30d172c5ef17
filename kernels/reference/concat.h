// Reference channel concatenation and slicing: plain loops, the oracle the
// distributed Concat and Slice are tested against. Arrays are dense
// row-major (N, C, spatial...); float and double.
//
//   // (2, 3, 4, 4) and (2, 5, 4, 4) side by side: (2, 8, 4, 4).
//   reference::concat_channels<float>({{2, 3, 4, 4}, {2, 5, 4, 4}}, {a, b}, y);
//   reference::slice_channels<float>({2, 8, 4, 4}, 3, 8, y, b_again);
#ifndef DISTCONV_KERNELS_REFERENCE_CONCAT_H_
#define DISTCONV_KERNELS_REFERENCE_CONCAT_H_

#include <vector>

#include "distconv/shape.h"

namespace distconv::reference {

// dst = the inputs side by side along C, in order. The shapes must agree
// in every dimension but C (throws kShapeMismatch).
template <typename T>
void concat_channels(const std::vector<Shape>& src_shapes,
                     const std::vector<const T*>& srcs, T* dst);

// dst (N, c_end - c_begin, spatial...) = channels [c_begin, c_end) of src;
// throws kInvalidArgument unless 0 <= c_begin <= c_end <= C.
template <typename T>
void slice_channels(const Shape& src_shape, Index c_begin, Index c_end,
                    const T* src, T* dst);

// The adjoint of slice_channels: diff_src (src_shape) holds diff_dst in
// channels [c_begin, c_end) and zeros elsewhere.
template <typename T>
void unslice_channels(const Shape& src_shape, Index c_begin, Index c_end,
                      const T* diff_dst, T* diff_src);

}  // namespace distconv::reference

#endif  // DISTCONV_KERNELS_REFERENCE_CONCAT_H_
