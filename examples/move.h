// Move: what joins two layers of a training example that run on different
// process grids (or split a tensor differently on one grid). Forward, a
// Redistribution takes the producer's output (on its grid, in its layout)
// into the tensor the consumer reads; backward, another takes the
// consumer's input gradient into the tensor the producer reads its output
// gradient from. The caller owns the tensors.
//
//   Move<float> m(level1_grid, skip.layout(), d_skip.layout(),
//          decoder_grid, skip_there.layout(), d_skip_there.layout());
//   m.forward(skip, skip_there);       // the skip on the decoder's grid
//   ... the decoder reads skip_there, writes d_skip_there ...
//   m.backward(d_skip_there, d_skip);  // its gradient on level 1's grid
//
// Both grids must cover the same ranks in the same order (grids made from
// one communicator); the layouts' distributions must have the same global
// shape (Redistribution's errors otherwise).
#ifndef DISTCONV_EXAMPLES_MOVE_H_
#define DISTCONV_EXAMPLES_MOVE_H_

#include "distconv/dist_tensor.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "layers/redistribute.h"

namespace distconv {
namespace examples {

// In host or device memory (float, bf16).
template <typename T, typename Space = HostSpace>
class Move {
 public:
  // out: the producer's output layout (on `from`), d_out: where the
  // producer reads its output gradient; in: what the consumer reads (on
  // `to`), d_in: where it writes its input gradient.
  Move(const ProcessGrid& from, const HaloLayout& out, const HaloLayout& d_out,
       const ProcessGrid& to, const HaloLayout& in, const HaloLayout& d_in)
      : there_(from, out, to, in), back_(to, d_in, from, d_out) {}

  // Collective over the grids' ranks; the tensors must have the layouts
  // given to the constructor (kShapeMismatch otherwise).
  void forward(const DistTensor<T, Space>& out, DistTensor<T, Space>& in) {
    there_.forward(out, in);
  }
  void backward(const DistTensor<T, Space>& d_in,
                DistTensor<T, Space>& d_out) {
    back_.forward(d_in, d_out);
  }

 private:
  Redistribution<T, Space> there_, back_;
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_MOVE_H_
