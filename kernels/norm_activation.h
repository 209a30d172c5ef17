// NormActivation: what a normalisation's passes apply to the normalised
// values in the same sweep over memory (kernels/local_batch_norm.h;
// BatchNormOptions::activation, layers/batch_norm_plan.h), and ReluGate,
// what their backward passes need to differentiate through a fused ReLU.
#ifndef DISTCONV_KERNELS_NORM_ACTIVATION_H_
#define DISTCONV_KERNELS_NORM_ACTIVATION_H_

#include <cstdint>
#include <cstring>

namespace distconv {

// kRelu: as the activation layer's ReLU (kernels/activation_ops.h): +0
// where the value is <= 0, NaN passing through; its gradient passes where
// the value is > 0.
enum class NormActivation { kNone, kRelu };

// The backward passes through a ReLU fused into the forward: the forward's
// per-channel factors a and b (as LocalBatchNorm::affine() took them, the
// mean being the pass's). dy counts where the forward's normalised value
// z = (x - mean) a + b was > above, recomputed from x as affine() computed
// it (bit for bit), and 0 elsewhere: the gradient through the ReLU, with
// no ReLU output read. A gate with null a: no ReLU. `above` is 0 where the
// forward stored z in the type it computed in; where it rounded z to a
// narrower type (bf16, fp16), the largest value that rounds to +0 there
// (largest_rounding_to_zero<T>(), below), so that the gate is the stored
// output's sign. The passes on such types raise it to that value
// themselves.
struct ReluGate {
  const double* a = nullptr;
  const double* b = nullptr;
  double above = 0.0;
};

// The largest float that rounds to +0 as T: 0 for float and double, half
// the smallest subnormal for bf16 and fp16 (rounding is monotone: a
// bisection over the positive floats' bits).
template <typename T>
float largest_rounding_to_zero() {
  std::uint32_t lo = 0, hi = 0x7f800000u;  // T(lo) is 0, T(hi) is not
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    float f;
    std::memcpy(&f, &mid, sizeof f);
    (float(T(f)) == 0.0f ? lo : hi) = mid;
  }
  float f;
  std::memcpy(&f, &lo, sizeof f);
  return f;
}

}  // namespace distconv

#endif  // DISTCONV_KERNELS_NORM_ACTIVATION_H_
