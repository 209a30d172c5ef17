#include "layers/activation.h"

#include <string>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "layers/internal/given_plan.h"
#include "layers/internal/pointwise.h"

namespace distconv {
namespace {

ShardPlan planned(const ProcessGrid& grid, const ActivationDesc& desc,
                  const Distribution& dist) {
  desc.validate();
  internal::check_grid(dist, grid.shape(),
                       (std::string(to_string(desc.kind)) + ":").c_str());
  return plan_activation(desc, dist, grid.rank());
}

}  // namespace

template <typename T>
Activation<T>::Activation(const ProcessGrid& grid, const ActivationDesc& desc,
                          const Distribution& dist)
    : desc_(desc), plan_(planned(grid, desc, dist)) {}

template <typename T>
Activation<T>::Activation(const ProcessGrid& grid, const ActivationDesc& desc,
                          ShardPlan plan)
    : desc_(desc), plan_(std::move(plan)) {
  internal::check_given_shard_plan(
      grid, plan_, internal::element_name<T>(), [&] {
    return plan_activation(desc_, plan_.layout("src").distribution(),
                           plan_.rank);
  });
}

template <typename T>
void Activation<T>::forward(const DistTensor<T>& src,
                            DistTensor<T>& dst) const {
  const std::string name = to_string(desc_.kind);
  internal::require_distribution(src, distribution(), name + ": src");
  internal::require_distribution(dst, distribution(), name + ": dst");
  const StridedView<const T> x = src.interior();
  if (desc_.kind == ActivationKind::kRelu) {
    // x <= 0 is false for NaN, which passes through.
    internal::transform([](T v) { return v <= T(0) ? T(0) : v; },
                        dst.interior(), x);
  } else {
    const Compute<T> slope = static_cast<Compute<T>>(desc_.negative_slope);
    internal::transform([slope](T v) { return v > T(0) ? v : T(slope * v); },
                        dst.interior(), x);
  }
}

template <typename T>
void Activation<T>::backward(const DistTensor<T>& src,
                             const DistTensor<T>& diff_dst,
                             DistTensor<T>& diff_src) const {
  backward_from(src, "src", diff_dst, diff_src);
}

template <typename T>
void Activation<T>::backward_from_dst(const DistTensor<T>& dst,
                                      const DistTensor<T>& diff_dst,
                                      DistTensor<T>& diff_src) const {
  require(desc_.keeps_sign(), ErrorKind::kUnsupported, to_string(desc_.kind),
          " with negative slope ", desc_.negative_slope,
          " cannot take its gradient from its output (two inputs of "
          "either sign give the same positive output); pass the input to "
          "backward()");
  backward_from(dst, "dst", diff_dst, diff_src);
}

// The derivative depends on whether the input is > 0, which the output
// tells as well when the activation keeps signs.
template <typename T>
void Activation<T>::backward_from(const DistTensor<T>& sign_of,
                                  const char* what,
                                  const DistTensor<T>& diff_dst,
                                  DistTensor<T>& diff_src) const {
  const std::string name = to_string(desc_.kind);
  internal::require_distribution(sign_of, distribution(), name + ": " + what);
  internal::require_distribution(diff_dst, distribution(),
                                 name + ": diff_dst");
  internal::require_distribution(diff_src, distribution(),
                                 name + ": diff_src");
  const StridedView<const T> v = sign_of.interior(), dy = diff_dst.interior();
  if (desc_.kind == ActivationKind::kRelu) {
    internal::transform([](T s, T g) { return s > T(0) ? g : T(0); },
                        diff_src.interior(), v, dy);
  } else {
    const Compute<T> slope = static_cast<Compute<T>>(desc_.negative_slope);
    internal::transform(
        [slope](T s, T g) { return s > T(0) ? g : T(slope * g); },
        diff_src.interior(), v, dy);
  }
}

template class Activation<float>;
template class Activation<double>;
template class Activation<bf16>;

}  // namespace distconv
