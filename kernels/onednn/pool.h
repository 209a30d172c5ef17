// oneDNN pooling kernel (CPU, fp32): forward and backward, planned once and
// executed many times on dense channels-last arrays (N, [D,] H, W, C).
// Local problems come from ConvGeometry windows, so padding may be
// asymmetric and differ from the global description's.
//
// The work may run in slabs: each sample's output split along the first
// spatial dimension into runs of rows whose input is about
// PoolOptions::slab_bytes, one oneDNN call per slab. forward() can then
// look at a slab's input right before oneDNN reads it (while it is in
// cache): LocalPool's check for NaN and -Inf costs no extra trip to memory.
// Slabs give the single call's results (max pooling bit for bit, the
// averages' gradients up to the order of additions): backward() adds the
// gradients of rows that two slabs' windows share.
//
// Max pooling keeps oneDNN's workspace (where each maximum was) from the
// last forward() for backward(); backward() before any forward() throws
// kState, and so does one after a forward() that a check stopped.
//
//   onednn::Pool pool(desc, {1, 34, 64, 16}, {1, 16, 32, 16});
//   pool.forward(src, dst);
//   pool.backward(diff_dst, diff_src);
#ifndef DISTCONV_KERNELS_ONEDNN_POOL_H_
#define DISTCONV_KERNELS_ONEDNN_POOL_H_

#include <memory>
#include <string>

#include "distconv/pool_desc.h"
#include "distconv/shape.h"

namespace distconv::onednn {

struct PoolOptions {
  // Input bytes per slab (at least one output row each); 0: one slab per
  // call, the whole problem.
  Index slab_bytes = 0;
};

// A look at `count` input values at `values` before oneDNN pools them;
// true stops the forward pass.
using PoolSlabCheck = bool (*)(const float* values, Index count);

class Pool {
 public:
  // Shapes are (N, C, spatial...). Throws distconv::Error (kUnsupported)
  // if oneDNN cannot do it.
  Pool(const PoolDesc& desc, const Shape& src_shape, const Shape& dst_shape,
       const PoolOptions& options = {});
  ~Pool();
  Pool(Pool&&) noexcept;
  Pool& operator=(Pool&&) noexcept;

  // oneDNN's names, "forward | backward".
  std::string implementation() const;
  // How many oneDNN calls a pass makes (samples times slabs).
  Index calls() const;

  // Returns false, with dst partly written, where `check` stopped it on
  // the input of some slab (the rows no window reads are not looked at).
  bool forward(const float* src, float* dst,
               PoolSlabCheck check = nullptr) const;
  // Overwrites diff_src.
  void backward(const float* diff_dst, float* diff_src) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_POOL_H_
