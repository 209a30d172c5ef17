// Scatter a global tensor from a root rank into the shards of a DistTensor,
// and gather the shards back; for tests, I/O and examples. Collective over
// the tensor's grid. Only shards (interiors) move; halos are untouched.
// `global` is a row-major array of global_shape().volume() elements, read
// (scatter) or written (gather) on the root only; other ranks may pass null.
//
//   std::vector<float> all(dist.global_shape().volume());   // on root
//   scatter(all.data(), x, /*root=*/0);
//   gather(x, all.data(), /*root=*/0);
#ifndef DISTCONV_SCATTER_GATHER_H_
#define DISTCONV_SCATTER_GATHER_H_

#include <vector>

#include "distconv/dist_tensor.h"

namespace distconv {

// Defined for float, double, bf16, fp16, int32_t, int64_t and uint8_t in
// HostSpace.
template <typename T>
void scatter(const T* global, DistTensor<T>& tensor, int root);
template <typename T>
void gather(const DistTensor<T>& tensor, T* global, int root);

// The gathered global tensor on `root` (empty elsewhere).
template <typename T>
std::vector<T> gathered(const DistTensor<T>& tensor, int root = 0) {
  std::vector<T> global(
      tensor.grid().rank() == root ? tensor.global_shape().volume() : 0);
  gather(tensor, global.data(), root);
  return global;
}

}  // namespace distconv

#endif  // DISTCONV_SCATTER_GATHER_H_
