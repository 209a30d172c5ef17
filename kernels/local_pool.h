// LocalPool<T>: one local pooling (a rank's window, from ConvGeometry) on
// strided views of the rank's buffers, planned once. It runs the
// implementation it is given (kernels/pool_impl.h; the heuristic's where
// none is), or the next in pool_impl_list() that applies: oneDNN in slabs
// or in one call, in place when float views are dense channels-last
// arrays, staged through dense scratch otherwise, and the reference loops
// (staged, NCHW) for double or what oneDNN refuses. impl() says which
// runs, implementation() names it with oneDNN's kernel and why an
// implementation asked for did not apply.
//
// Max pooling's backward uses the maxima of the last forward (oneDNN's
// workspace; the reference recomputes them from src, which must be what
// forward read). A window holding a NaN gives NaN, and its gradient goes
// to its last NaN; a window of -Inf only gives -Inf (its gradient to its
// first cell), as in the reference loops and PyTorch: oneDNN skips NaNs
// and starts its maxima at the lowest finite float, so float max pooling
// looks at its input for NaN and -Inf before oneDNN reads it (with
// PoolImpl::kSlabs, the heuristic's choice, slab by slab, right before
// oneDNN reads each from cache), and a forward that finds one runs the
// reference loops (its backward too).
//
//   LocalPool<float> pool(window_desc, src_view.extent(), src_view.strides(),
//                         dst_view.extent(), dst_view.strides());
//   pool.forward(src_view, dst_view);
//   pool.backward(src_view, diff_dst_view, diff_src_view);
#ifndef DISTCONV_KERNELS_LOCAL_POOL_H_
#define DISTCONV_KERNELS_LOCAL_POOL_H_

#include <memory>
#include <optional>
#include <string>

#include "distconv/bf16.h"
#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/pool_impl.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h (16-bit types
// staged: computed on fp32 copies, each result rounded once).
template <typename T>
class LocalPool {
 public:
  // `desc` carries the window's padding; extents are (n, C, spatial...),
  // strides the element strides the views will have (dst's also serve
  // backward's diff_dst; diff_src_strides backward's diff_src, empty:
  // src's); other views throw kShapeMismatch.
  // `impl`: the implementation to try first (unset: heuristic_pool_impl).
  LocalPool(const PoolDesc& desc, const Shape& src_extent,
            const Shape& src_strides, const Shape& dst_extent,
            const Shape& dst_strides, const Shape& diff_src_strides = {},
            std::optional<PoolImpl> impl = std::nullopt);
  ~LocalPool();
  LocalPool(LocalPool&&) noexcept;
  LocalPool& operator=(LocalPool&&) noexcept;

  PoolImpl impl() const;
  // "slabs: jit:avx512_core, in place", "reference, staged (slabs: ...)".
  std::string implementation() const;

  void forward(StridedView<const T> src, StridedView<T> dst) const;
  // Overwrites diff_src.
  void backward(StridedView<const T> src, StridedView<const T> diff_dst,
                StridedView<T> diff_src) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_POOL_H_
