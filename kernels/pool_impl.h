// The ways a local pooling can run on the CPU, as an ordered list (the way
// oneDNN dispatches: the first that applies to a call runs, the reference
// loops last), and the rule that picks one with no timing. LocalPool
// (kernels/local_pool.h) runs the one it is given, or the next in the list
// that applies, and says which and why.
//
//   PoolImpl pick = heuristic_pool_impl(desc);     // kSlabs for max
//   for (PoolImpl impl : pool_impl_list()) ...
//   PoolingOptions o;
//   o.impl = pool_impl_named("one_call", "--pool-impl");
#ifndef DISTCONV_KERNELS_POOL_IMPL_H_
#define DISTCONV_KERNELS_POOL_IMPL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distconv/pool_desc.h"

namespace distconv {

enum class PoolImpl {
  // oneDNN in slabs of about 1 MiB of input per sample (onednn::Pool's
  // slab_bytes); max pooling looks at each slab for NaN and -Inf right
  // before oneDNN reads it, while it is in cache.
  kSlabs,
  // oneDNN in one call per pass and batch of samples; max pooling first
  // looks at the whole input for NaN and -Inf.
  kOneCall,
  // The reference loops on NCHW copies (fp64; what oneDNN refuses).
  kReference,
};
// The oneDNN implementations run float views in place where they are
// dense channels-last arrays, on dense copies otherwise, and bf16 and fp16
// on fp32 copies; max pooling over a NaN or -Inf runs the reference loops
// for that forward and its backward (kernels/local_pool.h).

// "slabs", "one_call", "reference".
const char* to_string(PoolImpl impl);
// The impl of a name to_string() gives; throws distconv::Error
// (kInvalidArgument) naming `what` and the choices otherwise.
PoolImpl pool_impl_named(const std::string& name, const char* what);

// The candidates in the order they are tried.
std::vector<PoolImpl> pool_impl_list();

// Why `impl` cannot pool elements of type T whatever the problem (oneDNN's
// pooling runs fp32 here: float, and bf16 and fp16 on fp32 copies); ""
// where nothing rules it out before oneDNN is asked. Defined for every
// element type of distconv/element_types.h.
template <typename T>
std::string pool_impl_excluded(PoolImpl impl);

// The choice with no timing: slabs for max pooling, one call for the
// averages (measured, docs/performance.md, "Pooling"); the reference
// loops where oneDNN cannot run it.
PoolImpl heuristic_pool_impl(const PoolDesc& desc);

// Milliseconds of one run of `run` (a pooling's forward and backward on
// scratch data): what the measured choice calls for each candidate
// (kernels/pool_impl_search.h). Tests give a stand-in.
using PoolImplTimer =
    std::function<float(PoolImpl impl, const std::function<void()>& run)>;

class KernelCache;

struct PoolImplSearchOptions {
  int reps = 2;         // timed runs after one warm-up; the fastest counts
  PoolImplTimer timer;  // unset: the wall clock
  // Choices to reuse and add to (kernels/kernel_cache.h: the convolutions'
  // cache and file serve pooling too): a problem in it is not timed; the
  // layer puts what its ranks agreed on into it. None by default.
  std::shared_ptr<KernelCache> cache;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_POOL_IMPL_H_
