// oneDNN pooling kernel (CPU, fp32): forward and backward, planned once and
// executed many times on dense channels-last arrays (N, [D,] H, W, C).
// Local problems come from ConvGeometry windows, so padding may be
// asymmetric and differ from the global description's.
//
// Max pooling keeps oneDNN's workspace (where each maximum was) from the
// last forward() for backward(); backward() before any forward() throws
// kState.
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

class Pool {
 public:
  // Shapes are (N, C, spatial...). Throws distconv::Error (kUnsupported)
  // if oneDNN cannot do it.
  Pool(const PoolDesc& desc, const Shape& src_shape, const Shape& dst_shape);
  ~Pool();
  Pool(Pool&&) noexcept;
  Pool& operator=(Pool&&) noexcept;

  // oneDNN's names, "forward | backward".
  std::string implementation() const;

  void forward(const float* src, float* dst) const;
  // Overwrites diff_src.
  void backward(const float* diff_dst, float* diff_src) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_POOL_H_
