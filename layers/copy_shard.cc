#include "layers/copy_shard.h"

#include <cstdint>

#include "distconv/element_types.h"
#include "kernels/copy_view.h"
#include "layers/internal/copy_shard_impl.h"
#include "layers/internal/pointwise.h"

namespace distconv {

namespace {

void require_extent(const Shape& view, const Shape& shard, const char* what) {
  require(view == shard, ErrorKind::kShapeMismatch, "copy_shard: ", what,
          " view of extent ", view, " for a shard of extent ", shard);
}

}  // namespace

template <typename T>
void copy_shard(const StridedView<const T>& from, DistTensor<T>& to) {
  require_extent(from.extent(), to.shard().extent, "source");
  copy_view<T>(from, to.interior());
}

template <typename T>
void copy_shard(const DistTensor<T>& from, const StridedView<T>& to) {
  require_extent(to.extent(), from.shard().extent, "destination");
  copy_view<T>(from.interior(), to);
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template void copy_shard<T, HostSpace>(const DistTensor<T>&, DistTensor<T>&, \
                                         const Exec<HostSpace>&);              \
  template void copy_shard<T>(const StridedView<const T>&, DistTensor<T>&);    \
  template void copy_shard<T>(const DistTensor<T>&, const StridedView<T>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
