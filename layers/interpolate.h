// Interpolate<T>: linear interpolation (bilinear, trilinear) of tensors
// split over a ProcessGrid to a given size, as PyTorch's
// F.interpolate(mode='bilinear' / 'trilinear', align_corners either way)
// computes it (distconv/interpolate_desc.h has the math). Describe
// (InterpolateDesc), plan (plan_interpolate, layers/interpolate_plan.h;
// the constructor plans too), execute (forward, backward), many times.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, 2, 2});
//   InterpolateDesc d = InterpolateDesc::of_size({256, 256});
//   Interpolate<float> up(grid, d, Distribution(Shape{2, 64, 64, 64},
//                                               grid.shape()));
//   DistTensor<float> x(grid, up.src_layout()), y(grid, up.dst_layout());
//   up.forward(x, y);               // exchanges x's halos first
//   up.backward(dy, dx);            // dx: src_layout(); sums halos home
//
// The output's spatial dimensions are balanced over the grid's parts
// (N and C split as the input's); each rank's input buffer has the halos
// its outputs' taps reach. Forward exchanges them, then each rank
// computes its output shard. Backward adds each output gradient into its
// corners in the input gradient's buffer (halos included, zeroed first),
// then the reverse halo exchange adds the halo cells into their owners
// (the adjoint of forward's exchange); diff_src's halos hold partial sums
// afterwards. Grids may split N, C and space; uneven and empty shards.
//
// Reading in place (InterpolateOptions::input = ConvInput::kInPlace; every
// element type): the caller's input shard with no halos (shard_layout(), e.g.
// a framework's tensor wrapped) and a frame of src_layout() the layer
// fills at the edges only; the outputs whose taps lie in the shard read
// it there, the others the frame, whose halos are exchanged while the
// interior runs. Backward writes the input gradient's shard the same way:
// the boundary outputs add into the gradient's frame, whose halos go home
// while the interior adds into the shard, then its edges are added in.
//
//   InterpolateOptions o;
//   o.input = ConvInput::kInPlace;
//   Interpolate<float> up(grid, d, src, o);
//   DistTensor<float> x(grid, up.shard_layout()), x_frame(grid,
//                                                         up.src_layout());
//   up.forward(x, x_frame, y);
//   up.backward(dy, dx, dx_frame);   // dx: shard_layout(), overwritten
//
// Computes in double per output and rounds once (fp32, fp64). bf16 and
// fp16 tensors are read and written as they are, each output rounded once
// (to fp32, then to the type); backward sums the input gradient in fp32,
// each cell rounded once to the type (the reverse sums of the halo cells,
// and in place the frame's edges added into the shard, rounded per sum,
// docs/precision.md): from buffers in a window of two slices of the first
// spatial dimension (LocalInterpolate::backward_into), in place in an
// fp32 copy of the frame, which the layer keeps between calls. Host memory
// only.
//
// The constructor is collective over the grid and validates from global
// information, so bad input throws the same distconv::Error on every
// rank; so do the passes, for a tensor of another layout on any rank.
#ifndef DISTCONV_LAYERS_INTERPOLATE_H_
#define DISTCONV_LAYERS_INTERPOLATE_H_

#include <string>

#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/interpolate_desc.h"
#include "distconv/pimpl.h"
#include "distconv/process_grid.h"
#include "layers/interpolate_plan.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
class Interpolate {
 public:
  Interpolate(const ProcessGrid& grid, const InterpolateDesc& desc,
              const Distribution& src, const InterpolateOptions& options = {});

  const InterpolatePlan& plan() const;
  const HaloLayout& src_layout() const;  // input, with halos
  const HaloLayout& dst_layout() const;  // output, no halos
  const HaloLayout& diff_src_layout() const { return src_layout(); }
  const HaloLayout& diff_dst_layout() const { return dst_layout(); }
  // In place: the input's and its gradient's shards (no halos); throws
  // kState when planned with buffers with halos.
  const HaloLayout& shard_layout() const;

  void forward(DistTensor<T>& src, DistTensor<T>& dst);
  void backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_src);

  // The passes planned with ConvInput::kInPlace: src and diff_src of
  // shard_layout(), the frames of src_layout() (scratch the layer fills;
  // the caller keeps them); backward overwrites diff_src.
  void forward(const DistTensor<T>& src, DistTensor<T>& src_frame,
               DistTensor<T>& dst);
  void backward(const DistTensor<T>& diff_dst, DistTensor<T>& diff_src,
                DistTensor<T>& diff_src_frame);

  std::string describe() const;

  struct Impl;

 private:
  Impl& impl() const { return *impl_; }  // throws kState once moved from
  internal::Pimpl<Impl> impl_;
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERPOLATE_H_
