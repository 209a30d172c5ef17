#include "kernels/reference/softmax.h"

#include <algorithm>
#include <cmath>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv::reference {
namespace {

// Checks a (N, C, spatial...) shape; returns the cells per sample.
Index spatial_volume(const Shape& shape) {
  require(shape.ndims() == 4 || shape.ndims() == 5, ErrorKind::kInvalidArgument,
          "softmax shape ", shape, " is not (N, C, H, W) or (N, C, D, H, W)");
  for (Index e : shape) {
    require(e >= 0, ErrorKind::kInvalidArgument, "softmax shape ", shape,
            ": extents must be >= 0");
  }
  Index s = 1;
  for (int d = 2; d < shape.ndims(); ++d) s *= shape[d];
  return s;
}

}  // namespace

template <typename T>
void softmax_fwd(SoftmaxKind kind, const Shape& shape, const T* src, T* dst) {
  const Index cells = spatial_volume(shape), channels = shape[1];
  for (Index n = 0; n < shape[0]; ++n) {
    for (Index s = 0; s < cells; ++s) {
      const Index base = n * channels * cells + s;
      double m = -INFINITY;
      for (Index c = 0; c < channels; ++c) {
        m = std::max(m, double(src[base + c * cells]));
      }
      double sum = 0;
      for (Index c = 0; c < channels; ++c) {
        sum += std::exp(double(src[base + c * cells]) - m);
      }
      for (Index c = 0; c < channels; ++c) {
        const double x = double(src[base + c * cells]) - m;
        dst[base + c * cells] =
            static_cast<T>(kind == SoftmaxKind::kSoftmax ? std::exp(x) / sum
                                                         : x - std::log(sum));
      }
    }
  }
}

template <typename T>
void softmax_bwd(SoftmaxKind kind, const Shape& shape, const T* dst,
                 const T* diff_dst, T* diff_src) {
  const Index cells = spatial_volume(shape), channels = shape[1];
  for (Index n = 0; n < shape[0]; ++n) {
    for (Index s = 0; s < cells; ++s) {
      const Index base = n * channels * cells + s;
      double sum = 0;  // sum_k dy_k y_k (softmax), sum_k dy_k (log-softmax)
      for (Index c = 0; c < channels; ++c) {
        const Index i = base + c * cells;
        sum += kind == SoftmaxKind::kSoftmax
                   ? double(diff_dst[i]) * double(dst[i])
                   : double(diff_dst[i]);
      }
      for (Index c = 0; c < channels; ++c) {
        const Index i = base + c * cells;
        const double y = dst[i], dy = diff_dst[i];
        diff_src[i] = static_cast<T>(kind == SoftmaxKind::kSoftmax
                                         ? y * (dy - sum)
                                         : dy - std::exp(y) * sum);
      }
    }
  }
}

#define DISTCONV_INSTANTIATE(T)                                               \
  template void softmax_fwd<T>(SoftmaxKind, const Shape&, const T*, T*);      \
  template void softmax_bwd<T>(SoftmaxKind, const Shape&, const T*, const T*, \
                               T*);
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::reference
