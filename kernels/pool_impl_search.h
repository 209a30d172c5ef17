// The measured choice for one local pooling: each implementation of
// pool_impl_list() (kernels/pool_impl.h) that runs the problem as asked,
// timed (forward and backward) on scratch views with the call's extents
// and strides, the fastest kept. A pooling layer planned with
// ConvImplSearch::kMeasured runs this for each of its local poolings and
// then agrees with the other ranks (layers/pool_plan.h).
//
//   PoolImplTiming t = time_pool_impls<float>(desc, src_extent, src_strides,
//                                             dst_extent, dst_strides, {},
//                                             {});
//   LocalPool<float> k(desc, ..., t.impl);
#ifndef DISTCONV_KERNELS_POOL_IMPL_SEARCH_H_
#define DISTCONV_KERNELS_POOL_IMPL_SEARCH_H_

#include <string>
#include <vector>

#include "distconv/pool_desc.h"
#include "distconv/shape.h"
#include "kernels/pool_impl.h"

namespace distconv {

struct PoolImplTiming {
  PoolImpl impl = PoolImpl::kReference;
  float ms = 0;
};

// The candidates that run the problem as asked (a LocalPool asked for
// another falls back: skipped), each with its time, in list order; the
// reference loops only where nothing else runs (then untimed: ms 0).
// diff_src_strides: backward's input gradient's, empty: src's.
template <typename T>
std::vector<PoolImplTiming> time_pool_impl_list(
    const PoolDesc& desc, const Shape& src_extent, const Shape& src_strides,
    const Shape& dst_extent, const Shape& dst_strides,
    const Shape& diff_src_strides, const PoolImplSearchOptions& options);

// The fastest of them (ties: the earlier in the list).
template <typename T>
PoolImplTiming time_pool_impls(const PoolDesc& desc, const Shape& src_extent,
                               const Shape& src_strides,
                               const Shape& dst_extent,
                               const Shape& dst_strides,
                               const Shape& diff_src_strides,
                               const PoolImplSearchOptions& options);

// A canonical description of a local pooling's problem (element type,
// window, extents, strides): equal problems give equal strings on every
// rank, for problem_key() (kernels/gpu_algo_cache.h).
std::string pool_problem(const PoolDesc& desc, const Shape& src_extent,
                         const Shape& src_strides, const Shape& dst_extent,
                         const Shape& dst_strides,
                         const Shape& diff_src_strides, const char* element);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_POOL_IMPL_SEARCH_H_
