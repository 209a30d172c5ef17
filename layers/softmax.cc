// The softmax layer in host memory (Softmax<T>): kernels/local_softmax.h
// on the interiors. The layer itself is layers/internal/softmax_impl.h.
#include "layers/softmax.h"

#include <string>

#include "distconv/element_types.h"
#include "kernels/local_softmax.h"
#include "layers/internal/softmax_impl.h"

namespace distconv {
namespace internal {

template <typename T>
class SoftmaxBackend<T, HostSpace> {
 public:
  SoftmaxBackend(const SoftmaxOptions& o, const Box& shard)
      : kernel_(o.kind, shard.extent) {}

  void forward(const StridedView<const T>& x, const StridedView<T>& y) {
    kernel_.forward(x, y);
  }
  void backward(const StridedView<const T>& y, const StridedView<const T>& dy,
                const StridedView<T>& dx) {
    kernel_.backward(y, dy, dx);
  }
  std::string describe() const { return kernel_.describe(); }

 private:
  LocalSoftmax<T> kernel_;
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Softmax<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
