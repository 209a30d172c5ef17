#include "kernels/conv_impl.h"

#include <algorithm>
#include <iterator>

#include "distconv/error.h"

namespace distconv {
namespace {

constexpr ConvImpl kAll[] = {ConvImpl::kNative16,       ConvImpl::kInnerProduct,
                             ConvImpl::kAdjointForward, ConvImpl::kBlocked16,
                             ConvImpl::kBlocked8,       ConvImpl::kChannelsLast,
                             ConvImpl::kReference};

// Output channels per group from which the heuristic runs backward-data as
// the adjoint forward convolution. Measured with oneDNN 2.6 on an AMD
// EPYC (AVX-512): the channels-last forward kernel (brgconv:avx512_core,
// 1 thread) beat the backward-data kernel (jit:avx512_core) on the same
// problem by 1.08-1.31x from 8 such channels on (8x64->64 128² 3x3: 40.0
// vs 48.1 ms; 1x16->16 1024²: 22.8 vs 29.8 ms; 3D 1x16->16 64³: 18.2 vs
// 21.5 ms; 1x8->8 1024²: 12.2 vs 13.2 ms) and lost below (1x16->4 1024²:
// 6.6 vs 5.9 ms).
//
// Only where the output gradient is at least as large as the input
// gradient in every spatial dimension (a convolution that keeps its extent,
// or a piece of one with its halo): where the convolution shrinks its
// input, the adjoint forward pads the output gradient by up to the kernel's
// extent on each side, and it lost every time measured with oneDNN 3.2 on
// an AMD EPYC Zen 4 (1 thread, perf/conv_impls --dir=bwd_d, against
// channels-last): by 1.07-1.22x on windows with no padding (4x64->64 8³
// to 5³ 4x4x4: 2.91 vs 2.73 ms; 6³ to 4³ 3x3x3: 0.74 vs 0.68; 2x32->32
// 16² to 8² 9x9: 0.30 vs 0.26), by 3.2-6x where the kernel covers the
// whole input, which oneDNN's backward-data runs as an inner product
// (CosmoFlow's dense layer, 4x64->64 4³ to 1³: 0.42-0.58 vs 0.08-0.10 ms;
// 8³ to 1³: 5.87 vs 1.83; 2x32->64 8² to 1²: 0.27 vs 0.05), where with
// the extent kept it tied (2x16->16 64² 3x3: 0.33 vs 0.33 ms).
constexpr Index kAdjointForwardChannels = 8;

// Whether the output (gradient) is smaller than the input in some spatial
// dimension.
bool shrinks(const Shape& src_extent, const Shape& dst_extent) {
  for (int j = 2; j < src_extent.ndims(); ++j) {
    if (dst_extent[j] < src_extent[j]) return true;
  }
  return false;
}

// Backward-weights runs channels-last: with oneDNN 3.2 on an Intel Xeon
// (AVX-512, AMX; 1 thread) the channels-last kernel beat the blocked one
// even before the copies (bare primitives, 8x64->64 128² 3x3: 88.5 vs
// 133.0 ms; the layer's whole pass with and without the copies: 119-129
// vs 148-151 ms), where oneDNN 2.6 on an AMD EPYC had favoured blocked
// copies from 64 channels per group (148 vs 111 ms). blocked16 stays in
// the list for --kernel-choice=measured. On an AMD EPYC Zen 4 (oneDNN 3.2,
// 1 thread) blocked copies won by 9-14% on 128-wide images with 64-128
// channels (8x64->64 128²: 110-113 vs 123-132 ms) and lost by 2-10% on
// 64- and 256-wide ones with the same channels (8x64->64 64²: 26.8 vs
// 25.3; 1x64->64 256²: 55.9 vs 50.7), which no rule on channels or sizes
// separates: the measured search finds them there.
//
// On CPUs with AVX2 and no AVX-512, where oneDNN picks 8-channel blocks,
// backward-weights runs on blocked copies where the input or the output
// has this many channels per group: with oneDNN 3.2 on an AMD EPYC (AVX2,
// 1 thread) the channels-last kernel (jit:avx2) took 1.2-2.6x as long as
// the blocked one with its copies from 24 channels on (whole layer steps,
// --dir=bwd_w: 4x24->24 256² 138 vs 117 ms; 4x32->32 256² 431 vs 200;
// 2x48->48 256² 562 vs 214; 8x64->64 128² forward + backward 1336-1459
// vs 876-889 ms, bare oneDNN 870), and 1.4-1.7x where only one side was
// wide (2x32->16 256² 75-79 vs 53-55 ms; 2x16->32 256² 82-83 vs 55-56;
// 2x8->32 256² 45-48 vs 31; 2x64->16 128² 41 vs 25; 2x16->64 128² 40-43
// vs 26-27; 1x32->16 512² 158-161 vs 105-106), where with both sides
// narrow it was faster (2x16->16 256² 25-26 vs 28-29 ms; 2x18->16 256² 35
// vs 40-41; 1x16->16 1024² 208-213 vs 200-210, the search picking
// channels-last).
constexpr Index kBlocked8Channels = 24;

// On those CPUs also where both sides have 16 or more channels per group
// in whole 8-channel blocks and the images are at least this wide: on an
// AMD EPYC Zen 3 (AVX2, oneDNN 3.2, 1 thread, perf/conv_impls --dir=bwd_w,
// blocked copies against channels-last) blocked copies won by 12-24% on
// 256- to 1024-wide images (1x16->16 1024²: 97-100 vs 124-127 ms;
// 1x16->16 512²: 24.1 vs 31.5; 2x16->16 256²: 10.8-11.7 vs 13.1-13.9;
// 2x16->8 256²: 6.6 vs 7.4) and lost by 10-18% on narrower images or
// with 8 channels on both sides (8x16->16 64²: 3.7 vs 3.1; 2x8->8 256²:
// 3.5 vs 3.2; 1x8->8 1024²: 29.9 vs 27.3); with a partly filled block
// they tied (2x18->16 256²: 16.35 vs 16.34). The AVX2 EPYC above had
// 2x16->16 256² the other way (10% for channels-last).
constexpr Index kBlocked8NarrowChannels = 16;
constexpr Index kBlocked8NarrowWidth = 256;

// Whether backward-weights of `d` on an input of `src_extent` runs on
// 8-channel blocked copies (CPUs with AVX2 and no AVX-512 only).
bool blocked8_backward_weights(const ConvDesc& d, const Shape& src_extent) {
  const Index c = d.in_channels / d.groups, f = d.out_channels / d.groups;
  if (std::max(c, f) >= kBlocked8Channels) return true;
  return std::max(c, f) >= kBlocked8NarrowChannels && c % 8 == 0 &&
         f % 8 == 0 &&
         src_extent[src_extent.ndims() - 1] >= kBlocked8NarrowWidth;
}

// oneDNN picks 8-channel blocks where the CPU has AVX2 but no AVX-512.
bool avx2_without_avx512() {
  return __builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512f");
}

}  // namespace

const char* to_string(ConvImpl impl) {
  switch (impl) {
    case ConvImpl::kNative16:
      return "native16";
    case ConvImpl::kInnerProduct:
      return "inner_product";
    case ConvImpl::kAdjointForward:
      return "adjoint_forward";
    case ConvImpl::kBlocked16:
      return "blocked16";
    case ConvImpl::kBlocked8:
      return "blocked8";
    case ConvImpl::kChannelsLast:
      return "channels_last";
    case ConvImpl::kReference:
      return "reference";
  }
  return "?";
}

ConvImpl conv_impl_named(const std::string& name, const char* what) {
  for (ConvImpl impl : kAll) {
    if (name == to_string(impl)) return impl;
  }
  throw Error(ErrorKind::kInvalidArgument,
              std::string(what) + "=" + name +
                  " is not native16, inner_product, adjoint_forward, "
                  "blocked16, blocked8, channels_last or reference");
}

std::vector<ConvImpl> conv_impl_list(ConvPass pass) {
  if (pass == ConvPass::kBackwardData) {
    return {std::begin(kAll), std::end(kAll)};
  }
  return {ConvImpl::kNative16, ConvImpl::kInnerProduct, ConvImpl::kBlocked16,
          ConvImpl::kBlocked8, ConvImpl::kChannelsLast, ConvImpl::kReference};
}

std::string conv_impl_excluded(ConvImpl impl, const ConvDesc& d,
                               ConvPass pass) {
  if (impl == ConvImpl::kInnerProduct) {
    if (d.groups != 1) return "the inner product needs groups 1";
    for (int j = 0; j < d.spatial_dims(); ++j) {
      if (d.dilation[j] != 1) return "the inner product needs no dilation";
      if (is_circular(d.padding_mode, j) &&
          (d.padding_lower[j] != 0 || d.padding_upper[j] != 0)) {
        return "the inner product pads with zeros only";
      }
    }
    return "";
  }
  if (impl != ConvImpl::kAdjointForward) return "";
  if (pass != ConvPass::kBackwardData) {
    return "the adjoint forward computes backward-data only";
  }
  for (int j = 0; j < d.spatial_dims(); ++j) {
    const Index extent = d.dilation[j] * (d.kernel[j] - 1);
    if (d.stride[j] != 1) return "the adjoint forward needs stride 1";
    if (d.padding_lower[j] > extent || d.padding_upper[j] > extent) {
      return "the adjoint forward needs padding within the dilated kernel";
    }
  }
  return "";
}

bool covers_input(const ConvDesc& d, const Shape& src_extent) {
  if (src_extent.ndims() != d.spatial_dims() + 2 ||
      !conv_impl_excluded(ConvImpl::kInnerProduct, d, ConvPass::kForward)
           .empty()) {
    return false;
  }
  for (int j = 0; j < d.spatial_dims(); ++j) {
    const Index padded =
        d.padding_lower[j] + src_extent[j + 2] + d.padding_upper[j];
    if (d.kernel[j] != padded || d.padding_lower[j] < 0 ||
        d.padding_upper[j] < 0) {
      return false;
    }
  }
  return true;
}

ConvImpl heuristic_conv_impl(const ConvDesc& d, ConvPass pass,
                             const Shape& src_extent, const Shape& dst_extent) {
  // A dense layer (covers_input()) runs as the inner product in every pass:
  // with oneDNN 3.2 on an AMD EPYC Zen 4 (1 thread, perf/conv_impls, against
  // channels-last, which reorders the weights on every call) it won by
  // 1.2-8x on 4x64->64 4³ (forward 0.034 vs 0.281 ms, backward-data 0.037
  // vs 0.075, backward-weights 0.123 vs 0.469), 8x256->512 7² (2.0 vs 8.3,
  // 2.2 vs 9.5, 5.0 vs 25.3) and 256x64->10 4² (0.15 vs 0.32, 0.10 vs 0.37,
  // 0.13 vs 0.22), and lost forward and backward-data by 1.2-1.5x where the
  // activations outweigh the weights 4 to 1 (64x64->16 4³: 0.21 vs 0.14,
  // 0.15 vs 0.12; backward-weights 0.17 vs 0.21 won), which the measured
  // search finds.
  if (covers_input(d, src_extent)) return ConvImpl::kInnerProduct;
  if (pass == ConvPass::kBackwardData &&
      d.out_channels / d.groups >= kAdjointForwardChannels &&
      !shrinks(src_extent, dst_extent) &&
      conv_impl_excluded(ConvImpl::kAdjointForward, d, pass).empty()) {
    return ConvImpl::kAdjointForward;
  }
  if (pass == ConvPass::kBackwardWeights && avx2_without_avx512() &&
      blocked8_backward_weights(d, src_extent)) {
    return ConvImpl::kBlocked8;
  }
  return ConvImpl::kChannelsLast;
}

CpuVendor this_cpu_vendor() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_is("amd")) return CpuVendor::kAmd;
#endif
  return CpuVendor::kOther;
}

bool heuristic_takes_native16(const std::string& implementation,
                              CpuVendor vendor) {
  if (implementation.find("amx") != std::string::npos) return true;
  return vendor == CpuVendor::kAmd &&
         implementation.find("avx512_core_bf16") != std::string::npos;
}

const char* to_string(ConvImplSearch search) {
  return search == ConvImplSearch::kMeasured ? "measured" : "heuristic";
}

}  // namespace distconv
