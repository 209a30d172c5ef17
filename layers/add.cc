#include "layers/add.h"

#include "layers/internal/pointwise.h"

namespace distconv {

template <typename T>
void add(const DistTensor<T>& a, const DistTensor<T>& b, DistTensor<T>& dst) {
  const Distribution& want = a.layout().distribution();
  internal::require_distribution(b, want, "add: b");
  internal::require_distribution(dst, want, "add: dst");
  internal::transform([](T x, T y) { return T(x + y); }, dst.interior(),
                      a.interior(), b.interior());
}

template <typename T>
void add_backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_a,
                  DistTensor<T>& diff_b) {
  const Distribution& want = diff_dst.layout().distribution();
  internal::require_distribution(diff_a, want, "add backward: diff_a");
  internal::require_distribution(diff_b, want, "add backward: diff_b");
  for (DistTensor<T>* d : {&diff_a, &diff_b}) {
    if (d != &diff_dst) internal::copy(diff_dst.interior(), d->interior());
  }
}

template void add<float>(const DistTensor<float>&, const DistTensor<float>&,
                         DistTensor<float>&);
template void add<double>(const DistTensor<double>&,
                          const DistTensor<double>&, DistTensor<double>&);
template void add_backward<float>(const DistTensor<float>&,
                                  DistTensor<float>&, DistTensor<float>&);
template void add_backward<double>(const DistTensor<double>&,
                                   DistTensor<double>&, DistTensor<double>&);
template void add<bf16>(const DistTensor<bf16>&, const DistTensor<bf16>&,
                        DistTensor<bf16>&);
template void add_backward<bf16>(const DistTensor<bf16>&, DistTensor<bf16>&,
                                 DistTensor<bf16>&);

}  // namespace distconv
