#include "kernels/pool_impl_search.h"

#include <functional>
#include <sstream>

#include "distconv/bf16.h"
#include "distconv/element_types.h"
#include "distconv/halo_layout.h"
#include "distconv/strided_view.h"
#include "kernels/internal/fastest_run.h"
#include "kernels/local_pool.h"

namespace distconv {
template <typename T>
std::vector<PoolImplTiming> time_pool_impl_list(
    const PoolDesc& desc, const Shape& src_extent, const Shape& src_strides,
    const Shape& dst_extent, const Shape& dst_strides,
    const Shape& diff_src_strides, const PoolImplSearchOptions& options) {
  const Shape& dx_strides =
      diff_src_strides.ndims() == 0 ? src_strides : diff_src_strides;
  // Distinct finite values: max pooling finds no NaN or -Inf, its windows
  // few ties.
  std::vector<T> src(strided_span(src_extent, src_strides));
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = T(static_cast<float>(i % 251) * 0.125f - 15.0f);
  }
  std::vector<T> dst(strided_span(dst_extent, dst_strides), T(0.5f));
  std::vector<T> dx(strided_span(src_extent, dx_strides));
  const StridedView<const T> x(src.data(), src_extent, src_strides);
  const StridedView<T> y(dst.data(), dst_extent, dst_strides);
  const StridedView<T> g(dx.data(), src_extent, dx_strides);
  std::vector<PoolImplTiming> out;
  for (PoolImpl impl : pool_impl_list()) {
    if (impl == PoolImpl::kReference && !out.empty()) break;
    const LocalPool<T> k(desc, src_extent, src_strides, dst_extent, dst_strides,
                         diff_src_strides, impl);
    if (k.impl() != impl) continue;      // it would fall back
    if (impl == PoolImpl::kReference) {  // nothing else runs it
      out.push_back({impl, 0});
      break;
    }
    const std::function<void()> run = [&] {
      k.forward(x, y);
      k.backward(x, y, g);
    };
    out.push_back(
        {impl, internal::fastest_run(impl, run, options.reps, options.timer)});
  }
  return out;
}

template <typename T>
PoolImplTiming time_pool_impls(const PoolDesc& desc, const Shape& src_extent,
                               const Shape& src_strides,
                               const Shape& dst_extent,
                               const Shape& dst_strides,
                               const Shape& diff_src_strides,
                               const PoolImplSearchOptions& options) {
  const std::vector<PoolImplTiming> all =
      time_pool_impl_list<T>(desc, src_extent, src_strides, dst_extent,
                             dst_strides, diff_src_strides, options);
  PoolImplTiming best = all.front();  // the reference loops always run
  for (const PoolImplTiming& t : all) {
    if (t.ms < best.ms) best = t;
  }
  return best;
}

std::string pool_problem(const PoolDesc& d, const Shape& src_extent,
                         const Shape& src_strides, const Shape& dst_extent,
                         const Shape& dst_strides,
                         const Shape& diff_src_strides, const char* element) {
  std::ostringstream s;
  s << "cpu pool " << to_string(d.kind) << ' ' << element << " k" << d.kernel
    << " s" << d.stride << " pl" << d.padding_lower << " pu" << d.padding_upper
    << " x" << src_extent << src_strides << " y" << dst_extent << dst_strides
    << " dx" << diff_src_strides;
  return s.str();
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template std::vector<PoolImplTiming> time_pool_impl_list<T>(                 \
      const PoolDesc&, const Shape&, const Shape&, const Shape&, const Shape&, \
      const Shape&, const PoolImplSearchOptions&);                             \
  template PoolImplTiming time_pool_impls<T>(                                  \
      const PoolDesc&, const Shape&, const Shape&, const Shape&, const Shape&, \
      const Shape&, const PoolImplSearchOptions&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
