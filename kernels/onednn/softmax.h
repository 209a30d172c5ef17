// oneDNN softmax / log-softmax over channels (CPU, fp32): forward and
// backward, planned once and executed many times on dense channels-last
// arrays (N, [D,] H, W, C). Outputs may be their inputs (in place).
//
//   onednn::Softmax softmax(SoftmaxKind::kSoftmax, {2, 16, 64, 64});
//   softmax.forward(src, dst);
//   softmax.backward(dst, diff_dst, diff_src);
#ifndef DISTCONV_KERNELS_ONEDNN_SOFTMAX_H_
#define DISTCONV_KERNELS_ONEDNN_SOFTMAX_H_

#include <memory>
#include <string>

#include "distconv/loss_desc.h"
#include "distconv/shape.h"

namespace distconv::onednn {

class Softmax {
 public:
  // shape is (N, C, spatial...), non-empty. Throws distconv::Error
  // (kUnsupported) if oneDNN cannot do it.
  Softmax(SoftmaxKind kind, const Shape& shape);
  ~Softmax();
  Softmax(Softmax&&) noexcept;
  Softmax& operator=(Softmax&&) noexcept;

  // oneDNN's names, "forward | backward".
  std::string implementation() const;

  void forward(const float* src, float* dst) const;
  // From forward's output dst; overwrites diff_src.
  void backward(const float* dst, const float* diff_dst, float* diff_src) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_SOFTMAX_H_
