// Concat and Slice in host memory; written once for every space in
// layers/internal/concat_impl.h.
#include "layers/concat.h"

#include "layers/internal/concat_impl.h"

namespace distconv {

template class Concat<float>;
template class Concat<double>;
template class Slice<float>;
template class Slice<double>;
template class Concat<bf16>;
template class Concat<fp16>;
template class Slice<bf16>;
template class Slice<fp16>;

}  // namespace distconv
