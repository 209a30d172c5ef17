// Helpers for checking a convolution against a reference, shared by the
// benchmark driver and the tests: seeded random data and the max-norm
// relative error.
//
//   auto x = random_vector<float>(n, /*seed=*/1);      // uniform in [-1, 1)
//   auto m = random_values<float>(n, 2, /*offset=*/1e4);  // in 1e4 +- 1
//   max_relative_error(got, want);   // max |got - want| / max |want|; NaN: inf
//   cells_outside(got, want, scale, tol);  // cells off by > tol * scale
//   kRounding<bf16>                  // one rounding's relative error
#ifndef DISTCONV_TESTS_CONV_CHECK_H_
#define DISTCONV_TESTS_CONV_CHECK_H_

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/shape.h"

namespace distconv {

// Half a unit in the last place at 1 of a 16-bit type N (bf16, fp16): one
// rounding's relative error.
template <typename N>
constexpr double kRounding = std::is_same_v<N, bf16> ? 0x1p-8 : 0x1p-11;

template <typename T>
std::vector<T> random_vector(Index n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

// Values in [offset - 1, offset + 1): random_vector's, shifted.
template <typename T>
std::vector<T> random_values(Index n, unsigned seed, double offset) {
  std::vector<T> v = random_vector<T>(n, seed);
  for (T& x : v) x = static_cast<T>(double(x) + offset);
  return v;
}

template <typename T>
double max_relative_error(const std::vector<T>& got,
                          const std::vector<T>& want) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double d = std::abs(double(got[i]) - double(want[i]));
    if (std::isnan(d)) return INFINITY;  // std::max would drop a NaN
    diff = std::max(diff, d);
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return got.size() == want.size() ? diff / scale : INFINITY;
}

// |v| elementwise.
inline std::vector<double> absolute(std::vector<double> v) {
  for (double& x : v) x = std::abs(x);
  return v;
}

// How many cells of got differ from want by more than tol * scale[i]: each
// cell's own bound (bf16 results, whose rounding error scales with the
// magnitude of the sum that made them: the same pass on |x| and |w|).
template <typename T>
long long cells_outside(const std::vector<T>& got,
                        const std::vector<double>& want,
                        const std::vector<double>& scale, double tol) {
  long long bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(double(got[i]) - want[i]);
    if (!(d <= tol * scale[i] + 1e-30)) ++bad;
  }
  return bad + (got.size() == want.size() ? 0 : 1);
}

}  // namespace distconv

#endif  // DISTCONV_TESTS_CONV_CHECK_H_
