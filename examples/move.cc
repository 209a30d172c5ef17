#include "examples/move.h"

namespace distconv {
namespace examples {

template <typename T>
Move<T>::Move(const ProcessGrid& from, const HaloLayout& out,
              const HaloLayout& d_out, const ProcessGrid& to,
              const HaloLayout& in, const HaloLayout& d_in)
    : there_(from, out, to, in), back_(to, d_in, from, d_out) {}

template <typename T>
void Move<T>::forward(const DistTensor<T>& out, DistTensor<T>& in) {
  there_.forward(out, in);
}

template <typename T>
void Move<T>::backward(const DistTensor<T>& d_in, DistTensor<T>& d_out) {
  back_.forward(d_in, d_out);
}

template class Move<float>;
template class Move<bf16>;

}  // namespace examples
}  // namespace distconv
