// Internal: element-wise loops over strided views on the host, in runs that
// are contiguous in memory wherever the views allow (in channels-last
// interiors at least the C dimension), so that the compiler vectorises the
// innermost loop: a transform of K views and zero (copies:
// kernels/copy_view.h), on the runs of for_each_run
// (distconv/internal/pointwise_dims.h), the walk the CUDA kernels take.
// Targets including this header compile with POINTWISE_COPTS
// (kernels/copts.bzl: the loops carry `#pragma omp simd`). Header only.
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
#include "distconv/internal/pointwise_dims.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv::internal {

template <typename T, typename Op, typename... Src>
void contiguous_run(Op op, Index length, T* y, const Src*... x) {
  // No restrict: y may be one of the x (in place), element for element.
#pragma omp simd
  for (Index i = 0; i < length; ++i) y[i] = op(x[i]...);
}

// One run: contiguous(length, y, x...) where every view steps by 1, op
// element by element otherwise.
template <typename T, typename Contiguous, typename Op, size_t K, size_t... I,
          typename... Src>
void run(Contiguous contiguous, Op op, Index length,
         const std::array<Index, K>& offset, const std::array<Index, K>& step,
         std::index_sequence<I...>, T* y, const Src*... x) {
  if (step[0] == 1 && ((step[I + 1] == 1) && ...)) {
    contiguous(length, y + offset[0], (x + offset[I + 1])...);
  } else {
    for (Index i = 0; i < length; ++i) {
      y[offset[0] + i * step[0]] = op(x[offset[I + 1] + i * step[I + 1]]...);
    }
  }
}

// transform() below with the contiguous runs given to
// contiguous(length, y, x...) (a function built per instruction set, say),
// the others computed by op element by element.
template <typename T, typename Contiguous, typename Op, typename... Src>
void transform_runs(Contiguous contiguous, Op op, const StridedView<T>& dst,
                    const StridedView<const Src>&... src) {
  constexpr size_t K = 1 + sizeof...(Src);
  require(((src.extent() == dst.extent()) && ...), ErrorKind::kShapeMismatch,
          "element-wise views of different extents, dst ", dst.extent());
  for_each_run<K>(dst.extent(), {dst.strides(), src.strides()...},
                  [&](const std::array<Index, K>& offset, Index length,
                      const std::array<Index, K>& step) {
                    run(contiguous, op, length, offset, step,
                        std::make_index_sequence<K - 1>(), dst.data(),
                        src.data()...);
                  });
}

// dst(i) = op(src(i)...) for every index i of dst's extent, which every
// src shares. dst may be one of the srcs (the same elements), not a
// partial overlap.
template <typename T, typename Op, typename... Src>
void transform(Op op, const StridedView<T>& dst,
               const StridedView<const Src>&... src) {
  transform_runs([&](Index length, T* y,
                     const Src*... x) { contiguous_run(op, length, y, x...); },
                 op, dst, src...);
}

// dst = 0.
template <typename T>
void zero(const StridedView<T>& dst) {
  transform([]() { return T(0); }, dst);
}

}  // namespace distconv::internal

#endif  // DISTCONV_KERNELS_INTERNAL_STRIDED_RUNS_H_
