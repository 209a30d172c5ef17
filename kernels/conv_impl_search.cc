#include "kernels/conv_impl_search.h"

#include <functional>
#include <sstream>

#include "distconv/bf16.h"
#include "distconv/element_types.h"
#include "distconv/halo_layout.h"
#include "distconv/strided_view.h"
#include "kernels/internal/fastest_run.h"
#include "kernels/local_conv.h"

namespace distconv {

template <typename T>
std::vector<ConvImplTiming> time_conv_impl_list(
    const ConvDesc& desc, const Shape& src_extent, const Shape& src_strides,
    const Shape& dst_extent, const Shape& dst_strides, ConvPass pass,
    const ConvImplSearchOptions& options) {
  using P = Compute<T>;
  // Small values: no denormals, no overflow.
  std::vector<T> src(strided_span(src_extent, src_strides), T(0.25f));
  std::vector<T> dst(strided_span(dst_extent, dst_strides), T(0.5f));
  std::vector<P> w(desc.weights_shape().volume(), P(0.125f));
  std::vector<P> b(desc.out_channels, P(0.5f));
  std::vector<P> dw(w.size()), db(b.size());
  const StridedView<T> x(src.data(), src_extent, src_strides);
  const StridedView<T> y(dst.data(), dst_extent, dst_strides);
  std::vector<ConvImplTiming> out;
  for (ConvImpl impl : conv_impl_list(pass)) {
    // The loops only where nothing else runs (they are 10-100x slower).
    if (impl == ConvImpl::kReference && !out.empty()) break;
    const LocalConv<T> k(desc, src_extent, src_strides, dst_extent, dst_strides,
                         pass, impl);
    if (k.impl() != impl) continue;  // it would fall back
    const std::function<void()> run = [&] {
      if (pass == ConvPass::kForward) {
        k.forward(x, w.data(), b.data(), y);
      } else if (pass == ConvPass::kBackwardData) {
        k.backward_data(y, w.data(), x);
      } else {
        k.backward_weights(x, y, dw.data(), db.data());
      }
    };
    out.push_back(
        {impl, internal::fastest_run(impl, run, options.reps, options.timer)});
  }
  return out;
}

template <typename T>
ConvImplTiming time_conv_impls(const ConvDesc& desc, const Shape& src_extent,
                               const Shape& src_strides,
                               const Shape& dst_extent,
                               const Shape& dst_strides, ConvPass pass,
                               const ConvImplSearchOptions& options) {
  const std::vector<ConvImplTiming> all = time_conv_impl_list<T>(
      desc, src_extent, src_strides, dst_extent, dst_strides, pass, options);
  ConvImplTiming best = all.front();  // the reference loops always run
  for (const ConvImplTiming& t : all) {
    if (t.ms < best.ms) best = t;
  }
  return best;
}

std::string conv_problem(const ConvDesc& d, const Shape& src_extent,
                         const Shape& src_strides, const Shape& dst_extent,
                         const Shape& dst_strides, ConvPass pass,
                         const char* element) {
  std::ostringstream s;
  s << "cpu conv pass " << static_cast<int>(pass) << ' ' << element << " g"
    << d.groups << " c" << d.in_channels << " f" << d.out_channels << " k"
    << d.kernel << " s" << d.stride << " d" << d.dilation << " pl"
    << d.padding_lower << " pu" << d.padding_upper << " b"
    << (d.bias == ConvBias::kAdd) << " x" << src_extent << src_strides << " y"
    << dst_extent << dst_strides;
  return s.str();
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template std::vector<ConvImplTiming> time_conv_impl_list<T>(                 \
      const ConvDesc&, const Shape&, const Shape&, const Shape&, const Shape&, \
      ConvPass, const ConvImplSearchOptions&);                                 \
  template ConvImplTiming time_conv_impls<T>(                                  \
      const ConvDesc&, const Shape&, const Shape&, const Shape&, const Shape&, \
      ConvPass, const ConvImplSearchOptions&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
