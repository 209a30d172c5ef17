// Internal: the one walk of strided boxes into runs. PointwiseDims<K>: K
// strided views of one extent as element-wise loops walk them, on the host
// (for_each_run below: kernels/internal/strided_runs.h's transforms,
// box_copy.h's packing of boxes) and on the GPU (one element per thread,
// kernels/cuda/pointwise_kernel.h): the dimensions taken outermost first by
// view 0's strides, extents of 1 dropped, and neighbours merged where every
// view steps over the inner one without a gap, so that the innermost
// dimension is as long a run as every view allows (in channels-last
// interiors at least the C dimension). Pure, header only.
//
//   PointwiseDims<2> d = pointwise_dims<2>(extent, {dst.strides(),
//                                                   src.strides()});
//   std::int64_t at[2];
//   for (std::int64_t k = 0; k < d.volume(); ++k) {
//     pointwise_offsets(d, k, at);
//     dst[at[0]] = f(src[at[1]]);
//   }
#ifndef DISTCONV_INTERNAL_POINTWISE_DIMS_H_
#define DISTCONV_INTERNAL_POINTWISE_DIMS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "distconv/internal/host_device.h"
#include "distconv/shape.h"

namespace distconv::internal {

template <std::size_t K>
struct PointwiseDims {
  int count = 0;  // dimensions, outermost first; 0: the extent is empty
  std::int64_t extent[kMaxDims] = {};
  std::int64_t stride[K][kMaxDims] = {};  // per view, in elements

  DISTCONV_HOST_DEVICE std::int64_t volume() const {
    if (count == 0) return 0;
    std::int64_t v = 1;
    for (int d = 0; d < count; ++d) v *= extent[d];
    return v;
  }
};

// The walk of `extent` over views of these strides. A single element (an
// extent of ones) is one dimension of extent 1 and stride 1.
template <std::size_t K>
PointwiseDims<K> pointwise_dims(const Shape& extent,
                                const std::array<Shape, K>& strides) {
  PointwiseDims<K> out;
  const int n = extent.ndims();
  for (int d = 0; d < n; ++d) {
    if (extent[d] == 0) return out;
  }
  std::array<int, kMaxDims> order{};
  int m = 0;
  for (int d = 0; d < n; ++d) {
    if (extent[d] > 1) order[m++] = d;
  }
  std::stable_sort(order.begin(), order.begin() + m,
                   [&](int a, int b) { return strides[0][a] > strides[0][b]; });
  int& r = out.count;
  for (int j = 0; j < m; ++j) {
    const int d = order[j];
    bool merge = r > 0;
    for (std::size_t k = 0; k < K && merge; ++k) {
      merge = out.stride[k][r - 1] == strides[k][d] * extent[d];
    }
    const int to = merge ? r - 1 : r++;
    out.extent[to] = (merge ? out.extent[to] : 1) * extent[d];
    for (std::size_t k = 0; k < K; ++k) out.stride[k][to] = strides[k][d];
  }
  if (r == 0) {  // a single element
    r = 1;
    out.extent[0] = 1;
    for (std::size_t k = 0; k < K; ++k) out.stride[k][0] = 1;
  }
  return out;
}

// offset[k] = where element `e` (in [0, d.volume()), the innermost
// dimension fastest) lies in view k.
template <std::size_t K>
DISTCONV_HOST_DEVICE void pointwise_offsets(const PointwiseDims<K>& d,
                                            std::int64_t e,
                                            std::int64_t* offset) {
  for (std::size_t k = 0; k < K; ++k) offset[k] = 0;
  for (int j = d.count - 1; j >= 0; --j) {
    const std::int64_t i = e % d.extent[j];
    e /= d.extent[j];
    for (std::size_t k = 0; k < K; ++k) offset[k] += i * d.stride[k][j];
  }
}

// Calls fn(offsets, length, steps) for runs covering every index of
// `extent` once, where offsets[k] is the run's first element in view k and
// steps[k] the distance between its consecutive elements there: the
// innermost dimension of pointwise_dims, its outer ones in row-major order.
// Nothing is called for an empty extent. Host only. The second form walks
// dimensions already taken (pointwise_dims, or its outer ones only).
template <std::size_t K, typename Fn>
void for_each_run(const PointwiseDims<K>& dims, Fn fn) {
  const int r = dims.count;
  if (r == 0) return;
  std::array<Index, K> step{};
  for (std::size_t k = 0; k < K; ++k) step[k] = dims.stride[k][r - 1];
  std::array<Index, kMaxDims> i{};
  std::array<Index, K> offset{};
  while (true) {
    fn(static_cast<const std::array<Index, K>&>(offset), dims.extent[r - 1],
       static_cast<const std::array<Index, K>&>(step));
    int d = r - 2;
    for (; d >= 0; --d) {
      for (std::size_t k = 0; k < K; ++k) offset[k] += dims.stride[k][d];
      if (++i[d] < dims.extent[d]) break;
      for (std::size_t k = 0; k < K; ++k) {
        offset[k] -= dims.stride[k][d] * dims.extent[d];
      }
      i[d] = 0;
    }
    if (d < 0) return;
  }
}
template <std::size_t K, typename Fn>
void for_each_run(const Shape& extent, const std::array<Shape, K>& strides,
                  Fn fn) {
  for_each_run<K>(pointwise_dims<K>(extent, strides), fn);
}

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_POINTWISE_DIMS_H_
