// The pooling layer in host memory (Pooling<T>): LocalPool kernels (oneDNN,
// reference loops). The executor itself is layers/internal/pooling_impl.h.
#include "layers/pooling.h"

#include "distconv/element_types.h"
#include "kernels/local_pool.h"
#include "layers/internal/pointwise.h"
#include "layers/internal/pooling_impl.h"

namespace distconv {
namespace internal {

template <typename T>
struct PoolBackend<T, HostSpace> {
  using Kernel = LocalPool<T>;
  static Kernel kernel(const PoolKernelCall& k, const HaloSetupOptions&) {
    return Kernel(k.desc, k.src_extent, k.src_strides, k.dst_extent,
                  k.dst_strides, k.diff_src_strides, k.impl);
  }
  static void zero(const HaloSetupOptions&, DistTensor<T>& t) {
    internal::zero(t.buffer());  // in runs: 5-8x faster than a cell at a time
  }
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Pooling<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
