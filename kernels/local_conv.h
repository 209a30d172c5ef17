// LocalConv<T>: one local convolution (a piece of a rank's shard, from a
// ConvGeometry window) on strided views of the rank's buffers, planned once.
// It runs the implementation it is asked for (kernels/conv_impl.h) where
// that can run the problem on this CPU, else channels-last, else blocked
// copies, else the reference loops; how it reaches the data follows from
// the views:
//   - oneDNN in place (float; views dense in channels-last order, N
//     included): one call on the buffers themselves;
//   - oneDNN per sample (float; each sample dense): one call per sample;
//   - oneDNN staged (float): views copied to dense scratch and back;
//   - reference staged (double, or what oneDNN refuses): the plain loops
//     of kernels/reference on dense scratch.
// bf16 and fp16 views run oneDNN's own 16-bit kernels on the views with
// kNative16 (dense views, where oneDNN has such kernels for this CPU);
// otherwise they are staged: converted to fp32 scratch, computed by oneDNN
// or the loops in fp32 (fp32 accumulation) and rounded once into the
// 16-bit view. oneDNN runs them a slab at a time where the fp32 copies
// would exceed twice the L2 cache (whole samples, else rows of the first
// spatial dimension of one sample, each slab a local convolution of its
// own), so that the copies are read from the cache: the same outputs,
// the weight gradients summed slab by slab. fp32 pieces on blocked copies
// run the same slabs on the views themselves, so that the blocked copies
// are a slab's and stay in the cache. Weights, bias and their
// gradients are fp32 (Compute<T>).
// implementation() names what runs, e.g. "brgconv:avx512_core, in place"
// or "brgconv:avx2, staged in 128 slabs in fp32",
// and why the one asked for did not, where it did not.
//
//   LocalConv<float> piece(window_desc, src_view.extent(), src_view.strides(),
//                          dst_view.extent(), dst_view.strides(),
//                          ConvPass::kForward, ConvImpl::kChannelsLast);
//   piece.forward(src_view, weights, bias, dst_view);
#ifndef DISTCONV_KERNELS_LOCAL_CONV_H_
#define DISTCONV_KERNELS_LOCAL_CONV_H_

#include <memory>
#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_pass.h"

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
class LocalConv {
 public:
  using Param = Compute<T>;  // weights, bias and their gradients

  // `desc` carries the window's padding; extents are (n, C or F,
  // spatial...), strides the element strides the views will have.
  // `impl` is the implementation asked for; without one, the heuristic's
  // (heuristic_conv_impl()).
  LocalConv(const ConvDesc& desc, const Shape& src_extent,
            const Shape& src_strides, const Shape& dst_extent,
            const Shape& dst_strides, ConvPass pass, ConvImpl impl);
  LocalConv(const ConvDesc& desc, const Shape& src_extent,
            const Shape& src_strides, const Shape& dst_extent,
            const Shape& dst_strides, ConvPass pass);
  ~LocalConv();
  LocalConv(LocalConv&&) noexcept;
  LocalConv& operator=(LocalConv&&) noexcept;

  std::string implementation() const;
  // The bytes of the buffers it holds between calls (fp32 staging copies,
  // gradient scratch, its oneDNN kernels' buffers).
  Index held_bytes() const;
  // The implementation asked for, the one that runs, and why the one asked
  // for does not ("" where it runs).
  ConvImpl requested() const;
  ConvImpl impl() const;
  const std::string& why_not() const;

  // dst = conv(src) (+ bias).
  void forward(StridedView<const T> src, const Param* weights,
               const Param* bias, StridedView<T> dst) const;
  // diff_src = the adjoint of forward applied to diff_dst (overwrites).
  void backward_data(StridedView<const T> diff_dst, const Param* weights,
                     StridedView<T> diff_src) const;
  // Adds this piece's weight gradient (F, C/g, k...) to diff_weights and,
  // with bias, its bias gradient (F) to diff_bias.
  void backward_weights(StridedView<const T> src, StridedView<const T> diff_dst,
                        Param* diff_weights, Param* diff_bias) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The heuristic's implementation for a piece of T: `planned` (the plan's
// heuristic_conv_impl(), the same for every element type), except that
// bf16 and fp16 pieces take native16 where heuristic_takes_native16()
// says oneDNN's 16-bit kernel for it is the faster (kernels/conv_impl.h:
// on AMX tiles, or AVX512-BF16 on AMD CPUs), a choice otherwise left to
// the measured search, but for a dense layer's inner product (whose fp32
// copies of the activations cost less than native16's reorder of the
// weights). For 16-bit pieces it makes a native16 kernel to
// see which kernel oneDNN runs; other pieces make nothing.
template <typename T>
ConvImpl heuristic_local_conv_impl(const ConvDesc& desc,
                                   const Shape& src_extent,
                                   const Shape& src_strides,
                                   const Shape& dst_extent,
                                   const Shape& dst_strides, ConvPass pass,
                                   ConvImpl planned);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_LOCAL_CONV_H_
