// The measured choice for one local convolution: each implementation of
// the pass's list (kernels/conv_impl.h) that can run the problem on this
// CPU, timed on scratch views with the call's extents and strides, the
// fastest kept. A layer planned with ConvImplSearch::kMeasured runs this
// for each of its pieces (unless its cache knows the problem) and then
// agrees with the other ranks.
//
//   ConvImplTiming t = time_conv_impls<float>(desc, src_extent, src_strides,
//                                             dst_extent, dst_strides,
//                                             ConvPass::kForward, {});
//   LocalConv<float> k(desc, ..., ConvPass::kForward, t.impl);
#ifndef DISTCONV_KERNELS_CONV_IMPL_SEARCH_H_
#define DISTCONV_KERNELS_CONV_IMPL_SEARCH_H_

#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/shape.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_pass.h"

namespace distconv {

struct ConvImplTiming {
  ConvImpl impl = ConvImpl::kChannelsLast;
  float ms = 0;
};

// The candidates that run the problem as asked (others are skipped: a
// kernel asked for them falls back), each with its time, in list order;
// the reference loops only where nothing else runs.
template <typename T>
std::vector<ConvImplTiming> time_conv_impl_list(
    const ConvDesc& desc, const Shape& src_extent, const Shape& src_strides,
    const Shape& dst_extent, const Shape& dst_strides, ConvPass pass,
    const ConvImplSearchOptions& options);

// The fastest of them (ties: the earlier in the list).
template <typename T>
ConvImplTiming time_conv_impls(const ConvDesc& desc, const Shape& src_extent,
                               const Shape& src_strides,
                               const Shape& dst_extent,
                               const Shape& dst_strides, ConvPass pass,
                               const ConvImplSearchOptions& options);

// A canonical description of a kernel's problem (pass, element type,
// window, extents, strides): equal problems give equal strings on every
// rank, for problem_key() (kernels/gpu_algo_cache.h).
std::string conv_problem(const ConvDesc& desc, const Shape& src_extent,
                         const Shape& src_strides, const Shape& dst_extent,
                         const Shape& dst_strides, ConvPass pass,
                         const char* element);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CONV_IMPL_SEARCH_H_
