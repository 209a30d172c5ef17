// Internal: what the layers acting on shard interiors share (activation,
// add, concatenation and slicing, upsampling): checking a tensor's
// distribution while accepting any halos and storage order, and the
// element-wise operations per memory space (on the host the loops of
// kernels/internal/strided_runs.h; targets including this header compile with
// POINTWISE_COPTS, kernels/copts.bzl).
#ifndef DISTCONV_LAYERS_INTERNAL_POINTWISE_H_
#define DISTCONV_LAYERS_INTERNAL_POINTWISE_H_

#include <string>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/memory_space.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/copy_view.h"
#include "kernels/internal/strided_runs.h"

struct CUstream_st;  // cudaStream_t

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

// The element-wise operations of the layers acting on interiors, per
// memory space, for code written once for every space: at once in host
// memory (here), queued on `stream` in device memory
// (layers/internal/device_pointwise.h). Views of one extent; dst may be a
// source, element for element.
template <typename T, typename Space>
struct Elementwise;

template <typename T>
struct Elementwise<T, HostSpace> {
  // dst = a + b.
  static void sum(CUstream_st*, const StridedView<T>& dst,
                  const StridedView<const T>& a,
                  const StridedView<const T>& b) {
    transform([](T x, T y) { return T(x + y); }, dst, a, b);
  }
  static void copy(CUstream_st*, const StridedView<const T>& src,
                   const StridedView<T>& dst) {
    copy_view<T>(src, dst);
  }
  static void zero(CUstream_st*, const StridedView<T>& dst) {
    internal::zero(dst);
  }
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_POINTWISE_H_
