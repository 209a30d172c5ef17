// PoolWindow: one local pooling (a rank's window: a PoolDesc with the
// window's padding, on strided views) in the form the CUDA pooling kernels
// (pool.h) walk it, with the per-cell functions they run. Pure index math
// with no CUDA header, so it is built and tested everywhere against the
// reference loops: the kernels call the very same functions.
//
// Forward computes one output cell per call; backward one input-gradient
// cell per call, as a gather: the cell adds up the gradients of the windows
// that hold it, in output order, which is the order in which the reference
// loops add them. So no two calls write one cell (no atomics), the result
// is the same from run to run, and it is the reference's bit for bit in
// the element type. Max pooling's backward finds each window's maximum
// again from src (which must be what forward read). Windows, padding, ties
// and NaNs are as PoolDesc and reference::pool_fwd say.
//
// Cells are numbered with channels fastest, then the spatial dimensions,
// then samples, so that consecutive threads touch consecutive channels of
// a channels-last tensor.
//
//   PoolWindow w = make_pool_window(desc, src.extent(), src.strides(),
//                                   dst.extent(), dst.strides());
//   for (std::int64_t k = 0; k < w.outputs(); ++k)
//     pool_forward_cell<float>(w, src.data(), dst.data(), k);
#ifndef DISTCONV_KERNELS_CUDA_POOL_WINDOW_H_
#define DISTCONV_KERNELS_CUDA_POOL_WINDOW_H_

#include <cstdint>

#include "distconv/internal/host_device.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"

namespace distconv {

// Spatial entries are padded to 3 with extent 1 in front (2D has depth 1);
// strides are element strides in the order (N, C, D, H, W).
struct PoolWindow {
  PoolKind kind;
  std::int64_t samples, channels;
  std::int64_t in[3], out[3], ker[3], str[3], pad[3];  // pad: lower
  std::int64_t src_stride[5];  // src and diff_src
  std::int64_t dst_stride[5];  // dst and diff_dst
  std::int64_t ker_volume;

  DISTCONV_HOST_DEVICE std::int64_t outputs() const {
    return samples * channels * out[0] * out[1] * out[2];
  }
  DISTCONV_HOST_DEVICE std::int64_t inputs() const {
    return samples * channels * in[0] * in[1] * in[2];
  }
};

// The window of `desc` (its padding the window's; no circular padding:
// the halos hold what it reads) over views of these extents (N, C,
// spatial...) and element strides. Throws Error: kShapeMismatch unless
// dst_extent is what desc gives for src_extent and the strides have the
// extents' dimensions; kInvalidArgument for circular padding.
PoolWindow make_pool_window(const PoolDesc& desc, const Shape& src_extent,
                            const Shape& src_strides, const Shape& dst_extent,
                            const Shape& dst_strides);

namespace internal {

// Cell k of extents (n, c, e[0], e[1], e[2]), channels fastest: at = (n, c,
// spatial...).
DISTCONV_HOST_DEVICE inline void pool_split_cell(std::int64_t k,
                                                 std::int64_t channels,
                                                 const std::int64_t* e,
                                                 std::int64_t* at) {
  at[1] = k % channels;
  k /= channels;
  for (int d = 2; d >= 0; --d) {
    at[2 + d] = k % e[d];
    k /= e[d];
  }
  at[0] = k;
}

DISTCONV_HOST_DEVICE inline std::int64_t pool_offset(const std::int64_t* s,
                                                     const std::int64_t* at) {
  return s[0] * at[0] + s[1] * at[1] + s[2] * at[2] + s[3] * at[3] +
         s[4] * at[4];
}

// The input cells of output window o: [lo[d], hi[d]) in each dimension.
struct PoolRange {
  std::int64_t lo[3], hi[3];
};

DISTCONV_HOST_DEVICE inline PoolRange pool_window_range(
    const PoolWindow& w, const std::int64_t* o) {
  PoolRange r;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t start = o[d] * w.str[d] - w.pad[d];
    r.lo[d] = start < 0 ? 0 : start;
    r.hi[d] = start + w.ker[d] < w.in[d] ? start + w.ker[d] : w.in[d];
  }
  return r;
}

DISTCONV_HOST_DEVICE inline std::int64_t pool_divisor(const PoolWindow& w,
                                                      const PoolRange& r) {
  if (w.kind == PoolKind::kAverageIncludePadding) return w.ker_volume;
  return (r.hi[0] - r.lo[0]) * (r.hi[1] - r.lo[1]) * (r.hi[2] - r.lo[2]);
}

// The src offset of PyTorch's choice (reference::pool_fwd): the window's
// first cell, replaced by any later cell holding a larger value or a NaN.
template <typename T, typename Acc>
DISTCONV_HOST_DEVICE std::int64_t pool_argmax(const PoolWindow& w,
                                              const T* src, std::int64_t base,
                                              const PoolRange& r) {
  const std::int64_t* s = w.src_stride;
  std::int64_t best = -1;
  Acc best_value = Acc(0);
  for (std::int64_t i0 = r.lo[0]; i0 < r.hi[0]; ++i0) {
    for (std::int64_t i1 = r.lo[1]; i1 < r.hi[1]; ++i1) {
      for (std::int64_t i2 = r.lo[2]; i2 < r.hi[2]; ++i2) {
        const std::int64_t at = base + i0 * s[2] + i1 * s[3] + i2 * s[4];
        const Acc v = static_cast<Acc>(src[at]);
        if (best < 0 || v > best_value || v != v) {  // v != v: NaN
          best = at;
          best_value = v;
        }
      }
    }
  }
  return best;
}

}  // namespace internal

// dst at output cell k (in [0, w.outputs())) = the pooling of its window.
// Averages add in Acc, in window order, and divide once.
template <typename T, typename Acc = T>
DISTCONV_HOST_DEVICE void pool_forward_cell(const PoolWindow& w, const T* src,
                                            T* dst, std::int64_t k) {
  std::int64_t at[5];
  internal::pool_split_cell(k, w.channels, w.out, at);
  const internal::PoolRange r = internal::pool_window_range(w, at + 2);
  const std::int64_t* s = w.src_stride;
  const std::int64_t base = s[0] * at[0] + s[1] * at[1];
  T& out = dst[internal::pool_offset(w.dst_stride, at)];
  if (w.kind == PoolKind::kMax) {
    out = src[internal::pool_argmax<T, Acc>(w, src, base, r)];
    return;
  }
  Acc sum = Acc(0);
  for (std::int64_t i0 = r.lo[0]; i0 < r.hi[0]; ++i0) {
    for (std::int64_t i1 = r.lo[1]; i1 < r.hi[1]; ++i1) {
      for (std::int64_t i2 = r.lo[2]; i2 < r.hi[2]; ++i2) {
        sum += static_cast<Acc>(src[base + i0 * s[2] + i1 * s[3] + i2 * s[4]]);
      }
    }
  }
  out = static_cast<T>(sum / static_cast<Acc>(internal::pool_divisor(w, r)));
}

// diff_src at input cell k (in [0, w.inputs())) = the sum, over the
// windows holding it in output order, of its share of their gradient: a
// max window's whole gradient where the cell is its maximum, an average's
// gradient divided by its divisor. Cells no window holds get 0.
template <typename T, typename Acc = T>
DISTCONV_HOST_DEVICE void pool_backward_cell(const PoolWindow& w, const T* src,
                                             const T* diff_dst, T* diff_src,
                                             std::int64_t k) {
  std::int64_t at[5];
  internal::pool_split_cell(k, w.channels, w.in, at);
  const std::int64_t here = internal::pool_offset(w.src_stride, at);
  const std::int64_t base = w.src_stride[0] * at[0] + w.src_stride[1] * at[1];
  // The outputs whose windows hold the cell: [first[d], last[d]].
  std::int64_t first[3], last[3];
  for (int d = 0; d < 3; ++d) {
    const std::int64_t i = at[2 + d] + w.pad[d];  // >= 0
    const std::int64_t a = i - w.ker[d] + 1;
    first[d] = a <= 0 ? 0 : (a + w.str[d] - 1) / w.str[d];
    last[d] = i / w.str[d] < w.out[d] - 1 ? i / w.str[d] : w.out[d] - 1;
  }
  Acc sum = Acc(0);
  std::int64_t o[5] = {at[0], at[1], 0, 0, 0};
  for (o[2] = first[0]; o[2] <= last[0]; ++o[2]) {
    for (o[3] = first[1]; o[3] <= last[1]; ++o[3]) {
      for (o[4] = first[2]; o[4] <= last[2]; ++o[4]) {
        const internal::PoolRange r = internal::pool_window_range(w, o + 2);
        const Acc g = static_cast<Acc>(
            diff_dst[internal::pool_offset(w.dst_stride, o)]);
        if (w.kind == PoolKind::kMax) {
          if (internal::pool_argmax<T, Acc>(w, src, base, r) == here) {
            sum += g;
          }
        } else {
          sum += g / static_cast<Acc>(internal::pool_divisor(w, r));
        }
      }
    }
  }
  diff_src[here] = static_cast<T>(sum);
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_POOL_WINDOW_H_
