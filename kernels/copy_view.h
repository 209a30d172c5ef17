// copy_view: copies one strided view of host memory into another of the
// same extent, converting each element where the types differ. The copy
// walks contiguous runs (internal::for_each_run): a dense view's rows merge
// into one run, unit-stride runs are copied or converted in vector code.
// Defined for every element type and label type (distconv/element_types.h)
// to itself, bf16 and fp16 to float and float to bf16 and fp16.
//
//   copy_view<bf16, float>(shard.subview(box), scratch);  // widen
//   copy_view<float>(scratch, dst);                        // same type
#ifndef DISTCONV_KERNELS_COPY_VIEW_H_
#define DISTCONV_KERNELS_COPY_VIEW_H_

#include "distconv/bf16.h"
#include "distconv/fp16.h"
#include "distconv/strided_view.h"

namespace distconv {

// to = from, element for element; throws kShapeMismatch where the extents
// differ. The views must not overlap.
template <typename From, typename To = From>
void copy_view(StridedView<const From> from, StridedView<To> to);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_COPY_VIEW_H_
