// The activations' element-wise math (ActivationDesc says what each
// computes), one definition for the host loops (layers/activation.cc) and
// the CUDA kernels (kernels/cuda/activation_kernels.h). Pure, header only.
//
// Forward maps an input cell x; backward maps (s, g), where s has the sign
// of the input (the input itself, or the output when the activation keeps
// signs) and g is the output gradient. Where x <= 0 relu gives +0, leaky
// relu slope * x; a NaN passes through both. The derivative at 0 is the
// left one (0 or the slope). The slope is held in S, the type the layer
// computes in (fp32 for bf16).
#ifndef DISTCONV_KERNELS_ACTIVATION_OPS_H_
#define DISTCONV_KERNELS_ACTIVATION_OPS_H_

#include "distconv/internal/host_device.h"

namespace distconv {

template <typename T>
struct ReluForward {
  // x <= 0 is false for NaN, which passes through.
  DISTCONV_HOST_DEVICE T operator()(T x) const { return x <= T(0) ? T(0) : x; }
};

template <typename T, typename S>
struct LeakyReluForward {
  S slope;
  DISTCONV_HOST_DEVICE T operator()(T x) const {
    return x > T(0) ? x : T(slope * x);
  }
};

template <typename T>
struct ReluBackward {
  DISTCONV_HOST_DEVICE T operator()(T s, T g) const {
    return s > T(0) ? g : T(0);
  }
};

template <typename T, typename S>
struct LeakyReluBackward {
  S slope;
  DISTCONV_HOST_DEVICE T operator()(T s, T g) const {
    return s > T(0) ? g : T(slope * g);
  }
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_ACTIVATION_OPS_H_
