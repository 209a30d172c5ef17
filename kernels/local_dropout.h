// Dropout's per-rank pass: out = in * mask / (1 - p) on a shard's views,
// the mask drawn from the seed and each element's (kElements) or each
// sample's channel's (kChannels) global index (kernels/dropout_mask.h),
// so that any split of a tensor gets the mask of one process. `lower` is
// the views' first cell in the global tensor of shape `global`; out may
// be in (the same cells). p in [0, 1]: 0 copies, 1 zeroes.
//
//   dropout_apply<float>(x.interior(), y.interior(), x.shard().lower,
//                        x.global_shape(), DropoutKind::kChannels, 0.5,
//                        seed);
#ifndef DISTCONV_KERNELS_LOCAL_DROPOUT_H_
#define DISTCONV_KERNELS_LOCAL_DROPOUT_H_

#include <cstdint>

#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/dropout_mask.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
void dropout_apply(const StridedView<const T>& in, const StridedView<T>& out,
                   const Shape& lower, const Shape& global, DropoutKind kind,
                   double p, std::uint64_t seed);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_DROPOUT_H_
