// Internal: what the layers acting on shard interiors share (activation,
// add, concatenation and slicing, upsampling): checking a tensor's
// distribution while accepting any halos and storage order, and the
// memory spaces' primitives on their execution contexts (kernels/space_ops.h
// on the host; the GPU's, kernels/cuda/space_ops.h, in GPU builds). Targets
// including this header compile with POINTWISE_COPTS (kernels/copts.bzl:
// the host loops they write themselves).
#ifndef DISTCONV_LAYERS_INTERNAL_POINTWISE_H_
#define DISTCONV_LAYERS_INTERNAL_POINTWISE_H_

#include <string>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/exec.h"
#include "distconv/memory_space.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/copy_view.h"
#include "kernels/internal/strided_runs.h"
#include "kernels/space_ops.h"

namespace distconv::internal {

// Throws kShapeMismatch, naming `what` ("relu: dst"), unless the tensor's
// shards are those of `want`; its halo widths and storage order may be any.
template <typename T, typename Space>
void require_distribution(const DistTensor<T, Space>& t,
                          const Distribution& want, const std::string& what) {
  const Distribution& have = t.layout().distribution();
  require(have == want, ErrorKind::kShapeMismatch, what,
          "'s distribution (", have.describe(), ") is not ", want.describe());
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_POINTWISE_H_
