// Internal: element-wise loops over strided views on the host, in runs that are
// contiguous in memory wherever the views allow (in channels-last
// interiors at least the C dimension), so that the compiler vectorises the
// innermost loop: the runs (for_each_run), a transform of K views and
// zero (copies: kernels/copy_view.h). The dimensions are PointwiseDims's, as
// the CUDA kernels walk them. Targets including this header compile with
// POINTWISE_COPTS (kernels/copts.bzl: the loops carry `#pragma omp simd`).
// Header only.
//
//   using CV = StridedView<const float>;
//   internal::transform([](float a, float b) { return a + b; }, dst,
//                       CV(x), CV(y));        // dst = x + y
#ifndef DISTCONV_KERNELS_INTERNAL_STRIDED_RUNS_H_
#define DISTCONV_KERNELS_INTERNAL_STRIDED_RUNS_H_

#include <array>
#include <cstddef>
#include <utility>

#include "distconv/error.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/pointwise_dims.h"

namespace distconv::internal {

// Calls fn(offsets, length, steps) for runs covering every index of
// `extent` once, where offsets[k] is the run's first element in view k and
// steps[k] the distance between its consecutive elements there. Runs are
// as long as every view allows: dimensions are taken outermost first by
// view 0's strides, and merged where every view steps over the inner one
// without a gap (PointwiseDims). Nothing is called for an empty extent.
template <size_t K, typename Fn>
void for_each_run(const Shape& extent, const std::array<Shape, K>& strides,
                  Fn fn) {
  const PointwiseDims<K> dims = pointwise_dims<K>(extent, strides);
  const int r = dims.count;
  if (r == 0) return;
  std::array<Index, K> step{};
  for (size_t k = 0; k < K; ++k) step[k] = dims.stride[k][r - 1];
  std::array<Index, kMaxDims> i{};
  std::array<Index, K> offset{};
  while (true) {
    fn(static_cast<const std::array<Index, K>&>(offset), dims.extent[r - 1],
       static_cast<const std::array<Index, K>&>(step));
    int d = r - 2;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) offset[k] += dims.stride[k][d];
      if (++i[d] < dims.extent[d]) break;
      for (size_t k = 0; k < K; ++k) {
        offset[k] -= dims.stride[k][d] * dims.extent[d];
      }
      i[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename T, typename Op, typename... Src>
void contiguous_run(Op op, Index length, T* y, const Src*... x) {
  // No restrict: y may be one of the x (in place), element for element.
#pragma omp simd
  for (Index i = 0; i < length; ++i) y[i] = op(x[i]...);
}

template <typename T, typename Op, size_t K, size_t... I, typename... Src>
void run(Op op, Index length, const std::array<Index, K>& offset,
         const std::array<Index, K>& step, std::index_sequence<I...>, T* y,
         const Src*... x) {
  if (step[0] == 1 && ((step[I + 1] == 1) && ...)) {
    contiguous_run(op, length, y + offset[0], (x + offset[I + 1])...);
  } else {
    for (Index i = 0; i < length; ++i) {
      y[offset[0] + i * step[0]] = op(x[offset[I + 1] + i * step[I + 1]]...);
    }
  }
}

// dst(i) = op(src(i)...) for every index i of dst's extent, which every
// src shares. dst may be one of the srcs (the same elements), not a
// partial overlap.
template <typename T, typename Op, typename... Src>
void transform(Op op, const StridedView<T>& dst,
               const StridedView<const Src>&... src) {
  constexpr size_t K = 1 + sizeof...(Src);
  require(((src.extent() == dst.extent()) && ...), ErrorKind::kShapeMismatch,
          "element-wise views of different extents, dst ", dst.extent());
  for_each_run<K>(dst.extent(), {dst.strides(), src.strides()...},
                  [&](const std::array<Index, K>& offset, Index length,
                      const std::array<Index, K>& step) {
                    run(op, length, offset, step,
                        std::make_index_sequence<K - 1>(), dst.data(),
                        src.data()...);
                  });
}

// dst = 0.
template <typename T>
void zero(const StridedView<T>& dst) {
  transform([]() { return T(0); }, dst);
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_STRIDED_RUNS_H_
