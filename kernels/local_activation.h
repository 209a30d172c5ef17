// The activations on strided views of host memory (the per-rank work of
// Activation<T>): kernels/activation_ops.h's math over the views' longest
// contiguous runs (kernels/internal/strided_runs.h), at once on the calling
// thread. The GPU's are the same calls on its execution context
// (kernels/cuda/activation_kernels.h), so that the layer, written once for
// every space, calls one name.
//
//   activation_forward(exec, ActivationDesc::relu(), dst, src);
//
// dst (diff_src) may be one of the inputs (the same elements: in place),
// not a partial overlap; views of different extents: kShapeMismatch.
// Defined for every element type of distconv/element_types.h (the slope in
// fp32 for 16-bit cells).
#ifndef DISTCONV_KERNELS_LOCAL_ACTIVATION_H_
#define DISTCONV_KERNELS_LOCAL_ACTIVATION_H_

#include "distconv/activation_desc.h"
#include "distconv/exec.h"
#include "distconv/strided_view.h"

namespace distconv {

// dst = activation(src).
template <typename T>
void activation_forward(const Exec<HostSpace>& exec, const ActivationDesc& desc,
                        const StridedView<T>& dst,
                        const StridedView<const T>& src);

// diff_src = activation'(sign_of) * diff_dst, where sign_of has the sign of
// the forward input (the input, or the output of an activation that keeps
// signs).
template <typename T>
void activation_backward(const Exec<HostSpace>& exec,
                         const ActivationDesc& desc,
                         const StridedView<T>& diff_src,
                         const StridedView<const T>& sign_of,
                         const StridedView<const T>& diff_dst);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_ACTIVATION_H_
