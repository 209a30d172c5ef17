#include "layers/dropout.h"

#include <cmath>
#include <sstream>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "kernels/local_dropout.h"

namespace distconv {

template <typename T>
Dropout<T>::Dropout(const ProcessGrid& grid, const DropoutDesc& desc,
                    const Distribution& src)
    : grid_(&grid),
      desc_(desc),
      layout_(HaloLayout(src).with_storage(StorageOrder::kChannelsLast)) {
  internal::check_grid(src, grid.shape(), "input");
  require(std::isfinite(desc.p) && desc.p >= 0 && desc.p <= 1,
          ErrorKind::kInvalidArgument, "dropout probability ", desc.p,
          " must be in [0, 1]");
  require(desc.kind == DropoutKind::kElements ||
              desc.kind == DropoutKind::kChannels,
          ErrorKind::kInvalidArgument, "unknown DropoutKind value ",
          static_cast<int>(desc.kind));
  require(src.ndims() >= 2, ErrorKind::kInvalidArgument,
          "dropout needs (N, C, ...), got a tensor of shape ",
          src.global_shape());
}

template <typename T>
void Dropout<T>::apply(const DistTensor<T>& from, DistTensor<T>& to,
                       std::uint64_t seed) const {
  const Distribution& dist = layout_.distribution();
  require(from.layout().distribution() == dist &&
              to.layout().distribution() == dist,
          ErrorKind::kShapeMismatch, "dropout of tensors of another "
          "distribution than ", dist.describe());
  dropout_apply<T>(from.interior(), to.interior(), from.shard().lower,
                   dist.global_shape(), desc_.kind, desc_.p, seed);
}

template <typename T>
void Dropout<T>::forward(const DistTensor<T>& src, DistTensor<T>& dst,
                         std::uint64_t seed) const {
  apply(src, dst, seed);
}

template <typename T>
void Dropout<T>::backward(const DistTensor<T>& diff_dst,
                          DistTensor<T>& diff_src, std::uint64_t seed) const {
  apply(diff_dst, diff_src, seed);
}

template <typename T>
std::string Dropout<T>::describe() const {
  std::ostringstream out;
  out << "dropout of "
      << (desc_.kind == DropoutKind::kChannels ? "channels" : "elements")
      << ", p = " << desc_.p;
  return out.str();
}

#define DISTCONV_INSTANTIATE(T) template class Dropout<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
