// A memory space's primitives on strided views, each taking the space's
// execution context (distconv/exec.h), so that code written once for
// every space (the layers' executors) calls one name for each:
//
//   zero(exec, dst)          dst = 0
//   copy(exec, src, dst)     dst = src (views of one extent, no overlap)
//   sum(exec, dst, a, b)     dst = a + b (dst may be a or b, element for
//                            element; not a partial overlap)
//
// Host memory: here, at once, in the contiguous runs the views allow
// (kernels/internal/strided_runs.h, kernels/copy_view.h), for every element
// type (zero and copy for label types too). GPU memory:
// kernels/cuda/space_ops.h, queued on the context's stream. Each throws
// kShapeMismatch where the views' extents differ.
#ifndef DISTCONV_KERNELS_SPACE_OPS_H_
#define DISTCONV_KERNELS_SPACE_OPS_H_

#include "distconv/exec.h"
#include "distconv/strided_view.h"

namespace distconv {

template <typename T>
void zero(const Exec<HostSpace>& exec, const StridedView<T>& dst);

template <typename T>
void copy(const Exec<HostSpace>& exec, const StridedView<const T>& src,
          const StridedView<T>& dst);

template <typename T>
void sum(const Exec<HostSpace>& exec, const StridedView<T>& dst,
         const StridedView<const T>& a, const StridedView<const T>& b);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_SPACE_OPS_H_
