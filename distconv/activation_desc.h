// ActivationDesc: which element-wise activation a layer applies, as a plain
// value. Pure: no MPI, no kernels.
//
//   kRelu:       y = x > 0 ? x : 0           dy/dx = x > 0 ? 1 : 0
//   kLeakyRelu:  y = x > 0 ? x : slope * x   dy/dx = x > 0 ? 1 : slope
//
// NaN propagates through the forward (relu(NaN) = NaN, as in PyTorch); the
// derivative at 0 is the left one (0 or slope). With slope >= 0 the output
// has the input's sign (y > 0 exactly where x > 0), so backward may read
// the output instead of the input: what an in-place forward leaves.
//
//   ActivationDesc relu = ActivationDesc::relu();
//   ActivationDesc leaky = ActivationDesc::leaky_relu(0.2);
#ifndef DISTCONV_ACTIVATION_DESC_H_
#define DISTCONV_ACTIVATION_DESC_H_

namespace distconv {

enum class ActivationKind { kRelu, kLeakyRelu };

struct ActivationDesc {
  ActivationKind kind = ActivationKind::kRelu;
  double negative_slope = 0.01;  // kLeakyRelu only: finite, any sign

  static ActivationDesc relu();
  static ActivationDesc leaky_relu(double negative_slope = 0.01);

  // Throws distconv::Error (kInvalidArgument) for a kind outside the enum
  // or a leaky slope that is not finite.
  void validate() const;
  // The slope applied to x <= 0: 0 for kRelu.
  double slope() const;
  // Whether y > 0 exactly where x > 0 (relu, or a leaky slope >= 0), so
  // that backward can read the output instead of the input.
  bool keeps_sign() const;
};

const char* to_string(ActivationKind kind);

}  // namespace distconv

#endif  // DISTCONV_ACTIVATION_DESC_H_
