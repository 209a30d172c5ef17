// LocalInterpolate<T>: linear interpolation's per-rank loops
// (layers/interpolate.h) on strided (N, C, spatial...) views, given each
// spatial dimension's taps in the input buffer's local coordinates
// (distconv/interpolate_desc.h has the math): forward reads the corners
// of each output cell and sums them with the taps' weights; backward adds
// each output's gradient times the weights into its corners. Computes in
// double, rounds each result once to T (16-bit types: to float, then to
// T). The loops over channels run as vector code where channels are
// contiguous (channels-last), compiled for AVX-512, AVX2 and the baseline
// and chosen when the library loads; every version gives the same bits.
// Defined for every element type of distconv/element_types.h: bf16 and
// fp16 views are read and written as they are, and backward adds into a
// gradient of Compute<T> (fp32 for them), so that the sums are not
// rounded to 16 bits.
//
//   std::vector<LocalTaps> taps = ...;          // one per spatial dimension
//   LocalInterpolate<float>::forward(x_buffer, taps, y_shard);
//   LocalInterpolate<float>::backward(dy_shard, taps, dx_buffer);  // +=
//   LocalInterpolate<bf16>::backward(dy_bf16, taps, dx_float);     // +=
//   LocalInterpolate<bf16>::backward_into(dy_bf16, taps, dx_bf16, scratch);
#ifndef DISTCONV_KERNELS_LOCAL_INTERPOLATE_H_
#define DISTCONV_KERNELS_LOCAL_INTERPOLATE_H_

#include <vector>

#include "distconv/bf16.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv {

// One spatial dimension's taps: entry o is the output shard's o-th index,
// reading input cells i0[o], i1[o] (local coordinates) with weights w0[o],
// w1[o].
struct LocalTaps {
  std::vector<Index> i0, i1;
  std::vector<double> w0, w1;
};

template <typename T>
struct LocalInterpolate {
  // y = the taps' weighted corners of x; y's spatial extents are the taps'
  // sizes, its N and C x's.
  static void forward(StridedView<const T> x,
                      const std::vector<LocalTaps>& taps, StridedView<T> y);
  // dx += the taps' weights times dy, at the corners.
  static void backward(StridedView<const T> dy,
                       const std::vector<LocalTaps>& taps,
                       StridedView<Compute<T>> dx);
  // dx = the taps' weights times dy at the corners: every cell of dx
  // written (0 where no output reads it), its sum in Compute<T> from 0 in
  // backward()'s order, rounded once to T. 2D and 3D gradients
  // channels-last and dense past their first spatial dimension sum in a
  // window of two slices of it (cache-sized, no pass to zero dx first);
  // others in a zeroed Compute<T> copy (16-bit types) or dx itself.
  // `scratch`: the caller's, kept between calls.
  static void backward_into(StridedView<const T> dy,
                            const std::vector<LocalTaps>& taps,
                            StridedView<T> dx,
                            std::vector<Compute<T>>& scratch);
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_INTERPOLATE_H_
