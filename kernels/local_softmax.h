// LocalSoftmax<T>: softmax and log-softmax over channels on one rank's
// strided (N, C, spatial...) views in host memory: oneDNN on fp32 views
// that are dense channels-last and of the extent it was made for (the
// layer's plan layouts), otherwise loops
// over kernels/channel_cells.h's cell functions (in double, each result
// rounded once to T), the same the CUDA kernels run. Made once for a
// shard's extent, run many times. Defined for every element type of
// distconv/element_types.h.
//
//   LocalSoftmax<float> s(SoftmaxKind::kSoftmax, shard.extent);
//   s.forward(x, y);
//   s.backward(y, dy, dx);
//   s.describe();   // "... on channels-last dense shards, loops ..."
#ifndef DISTCONV_KERNELS_LOCAL_SOFTMAX_H_
#define DISTCONV_KERNELS_LOCAL_SOFTMAX_H_

#include <memory>
#include <string>

#include "distconv/loss_desc.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv {
namespace onednn {
class Softmax;
}  // namespace onednn

template <typename T>
class LocalSoftmax {
 public:
  // For views of `extent`. Where oneDNN refuses the problem (this rank
  // only: nothing collective), the loops run and describe() says why.
  LocalSoftmax(SoftmaxKind kind, const Shape& extent);
  ~LocalSoftmax();
  LocalSoftmax(LocalSoftmax&&) noexcept;
  LocalSoftmax& operator=(LocalSoftmax&&) noexcept;

  void forward(const StridedView<const T>& x, const StridedView<T>& y) const;
  // From forward's output y; overwrites dx.
  void backward(const StridedView<const T>& y, const StridedView<const T>& dy,
                const StridedView<T>& dx) const;
  // What runs the passes.
  std::string describe() const;

 private:
  // Whether oneDNN runs on these views.
  template <typename... Views>
  bool use_dnnl(const Views&... views) const;

  SoftmaxKind kind_;
  Shape extent_;                           // oneDNN's
  std::unique_ptr<onednn::Softmax> dnnl_;  // fp32 on a non-empty extent
  std::string dnnl_refused_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_SOFTMAX_H_
