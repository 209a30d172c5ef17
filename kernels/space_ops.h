// A memory space's primitives on strided views, each taking the space's
// execution context (distconv/exec.h), so that code written once for
// every space (the layers' executors) calls one name for each:
//
//   zero(exec, dst)          dst = 0
//   copy(exec, src, dst)     dst = src (views of one extent, no overlap)
//   sum(exec, dst, a, b)     dst = a + b (dst may be a or b, element for
//                            element; not a partial overlap)
//   fill_per_channel(exec, dst, values)   dst(n, c, ...) = values[c], or 0
//                            where values is null (a bias)
//   add_per_channel(exec, dst, values)    dst(n, c, ...) += values[c]
//   sum_per_channel(exec, src, sums)      sums[c] += src(n, c, ...) summed
//                            over every cell (a bias gradient)
//
// The per-channel values and sums are of the compute type (Compute<T>:
// fp32 for bf16 and fp16 elements), C of them for C channels.
//
// Host memory: here, at once, in the contiguous runs the views allow
// (kernels/internal/strided_runs.h, kernels/copy_view.h), for every element
// type (zero and copy for label types too). GPU memory:
// kernels/cuda/space_ops.h, queued on the context's stream (the
// per-channel ones, on the context's cuDNN handle, in
// kernels/cudnn/tensor_ops.h). Each throws kShapeMismatch where the views'
// extents differ.
#ifndef DISTCONV_KERNELS_SPACE_OPS_H_
#define DISTCONV_KERNELS_SPACE_OPS_H_

#include "distconv/bf16.h"
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

template <typename T>
void fill_per_channel(const Exec<HostSpace>& exec, const StridedView<T>& dst,
                      const Compute<T>* values);
template <typename T>
void add_per_channel(const Exec<HostSpace>& exec, const StridedView<T>& dst,
                     const Compute<T>* values);
template <typename T>
void sum_per_channel(const Exec<HostSpace>& exec,
                     const StridedView<const T>& src, Compute<T>* sums);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_SPACE_OPS_H_
