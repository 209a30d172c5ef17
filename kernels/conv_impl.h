// The ways a local convolution can run on the CPU, as an ordered list per
// pass (the way oneDNN dispatches: each says whether it applies to a call
// and why not), the rule that picks one with no timing, and how a layer
// chooses: by that rule, or by timing the candidates when it is planned.
//
//   for (ConvImpl impl : conv_impl_list(ConvPass::kBackwardData)) ...
//   ConvImpl pick = heuristic_conv_impl(local_desc, ConvPass::kBackwardData,
//                                       src_extent, dst_extent);
//   CpuConvOptions o;
//   o.search = ConvImplSearch::kMeasured;   // time them at plan time
//   o.cache = std::make_shared<KernelCache>();  // shared, savable
#ifndef DISTCONV_KERNELS_CONV_IMPL_H_
#define DISTCONV_KERNELS_CONV_IMPL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_pass.h"

namespace distconv {

enum class ConvImpl {
  // bf16 and fp16 tensors: oneDNN's own 16-bit kernels on the 16-bit
  // channels-last arrays (dense views: in place or per sample), weights
  // rounded to the type, weight gradients fp32.
  kNative16,
  // A dense layer's convolution (the kernel covers the whole input and its
  // zero padding, if any: one output cell; no dilation, groups 1; a piece
  // of a dense layer split over ranks, say) as oneDNN's inner product, one
  // matrix product, on plain (n, C, kernel...) copies of the padded input
  // (or input gradient), the weights as they are: where the channels-last
  // kernels would reorder the weights on every call, which for a dense
  // layer are larger than the activations.
  kInnerProduct,
  // Backward-data with stride 1 as oneDNN's forward kernel on the adjoint
  // problem (weights transposed and flipped, mirrored padding).
  kAdjointForward,
  // oneDNN on copies of the activations in its 16-channel blocked layout
  // (nChw16c / nCdhw16c), where it picks that layout itself.
  kBlocked16,
  // The same in its 8-channel blocked layout (nChw8c / nCdhw8c: its AVX2
  // kernels' choice).
  kBlocked8,
  // oneDNN on channels-last arrays: the views themselves where dense (in
  // place or per sample), else dense copies.
  kChannelsLast,
  // The reference loops on dense copies (what oneDNN cannot do: fp64).
  kReference,
};
// The oneDNN implementations other than kNative16 run bf16 and fp16
// tensors on fp32 copies ("in fp32").

// "native16", "inner_product", "adjoint_forward", "blocked16", "blocked8",
// "channels_last", "reference".
const char* to_string(ConvImpl impl);
// The impl of a name to_string() gives; throws distconv::Error
// (kInvalidArgument) naming `what` and the choices otherwise.
ConvImpl conv_impl_named(const std::string& name, const char* what);

// The candidates of a pass, in the order they are tried: the more
// specialised first, the reference loops last.
std::vector<ConvImpl> conv_impl_list(ConvPass pass);

// Why `impl` cannot run `pass` of `desc` whatever the CPU (the adjoint
// needs stride 1 and padding within the dilated kernel; it is a
// backward-data implementation; the inner product needs groups 1, no
// dilation and zero padding); "" where nothing rules it out before oneDNN
// is asked (the inner product's padded input must also be the kernel's
// extent: covers_input()).
std::string conv_impl_excluded(ConvImpl impl, const ConvDesc& desc,
                               ConvPass pass);

// Whether `desc` on an input of `src_extent` ((n, C, spatial...)) is a
// dense layer kInnerProduct runs: its kernel the padded input's spatial
// extent, and nothing conv_impl_excluded() rules out.
bool covers_input(const ConvDesc& desc, const Shape& src_extent);

// The choice with no timing, for a call from an input of `src_extent` to an
// output of `dst_extent` ((n, C or F, spatial...), as LocalConv's):
// backward-data as the adjoint forward from 8 output channels per group
// where it applies and the output is nowhere smaller than the input (no
// window that shrinks it, such as a dense layer's); backward-weights on
// 8-channel blocked copies where the CPU has AVX2 but not AVX-512 (where
// oneDNN picks those blocks) and the input or the output has 24 channels
// per group or more, or both have whole 8-channel blocks, one 16 or more,
// on images at least 256 wide; channels-last otherwise (16-channel blocked
// copies only when asked for or measured faster). A kernel that cannot run it
// (oneDNN refuses, fp64) falls back to channels-last, then blocked copies, then
// the reference loops. (bf16 and fp16 pieces: heuristic_local_conv_impl() in
// kernels/local_conv.h.)
ConvImpl heuristic_conv_impl(const ConvDesc& desc, ConvPass pass,
                             const Shape& src_extent, const Shape& dst_extent);

// The CPU makers whose cores the heuristic tells apart.
enum class CpuVendor { kAmd, kOther };

// The maker of the CPU this runs on.
CpuVendor this_cpu_vendor();

// Whether the heuristic runs a bf16 or fp16 piece on oneDNN's own 16-bit
// kernel (kNative16) rather than the fp32 kernels on fp32 copies, given
// the kernel oneDNN runs it with (`implementation`, LocalConv's
// implementation() of a native16 kernel) on a CPU of `vendor`: where that
// kernel runs on AMX tiles, or on AVX512-BF16 instructions
// ("avx512_core_bf16") of an AMD CPU. Measured with oneDNN 3.2, one thread,
// on the standard problems and the examples' convolutions
// (docs/performance.md): on AMX tiles 2.5-7x faster than the fp32 layer; on
// AVX512-BF16 an AMD EPYC (Zen 4) ran them 1.4-2.3x faster than fp32
// kernels on fp32 copies in every pass but one (9% behind; Zen 5 with
// oneDNN 2.6: 2.1-2.2x forward), where
// an Intel Xeon without AMX ran them at half to 0.85 of that speed. Other
// CPUs run fp32 kernels, and the measured search times native16 too.
bool heuristic_takes_native16(const std::string& implementation,
                              CpuVendor vendor);

enum class ConvImplSearch {
  // heuristic_conv_impl(): no run at plan time.
  kHeuristic,
  // Each rank times the candidates that apply on its pieces' shapes when
  // the layer is planned; the ranks then run, for each problem, the
  // fastest any rank found.
  kMeasured,
};

class KernelCache;

// Milliseconds of one run of `run` (a kernel's pass on scratch data):
// what the search calls for each candidate. Tests give a stand-in.
using ConvImplTimer =
    std::function<float(ConvImpl impl, const std::function<void()>& run)>;

struct ConvImplSearchOptions {
  int reps = 2;         // timed runs after one warm-up; the fastest counts
  ConvImplTimer timer;  // unset: the wall clock
};

// How the CPU convolutions of a layer choose their implementations.
struct CpuConvOptions {
  ConvImplSearch search = ConvImplSearch::kHeuristic;
  // With kMeasured: choices to reuse and add to, shared by the layers
  // given the same cache (kernels/kernel_cache.h); none by default
  // (each layer times its own pieces).
  std::shared_ptr<KernelCache> cache;
  ConvImplSearchOptions timing;  // how the candidates are timed
};

// "heuristic" or "measured".
const char* to_string(ConvImplSearch search);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CONV_IMPL_H_
