#include "distconv/activation_desc.h"

#include <cmath>

#include "distconv/error.h"

namespace distconv {

ActivationDesc ActivationDesc::relu() { return {ActivationKind::kRelu, 0.0}; }

ActivationDesc ActivationDesc::leaky_relu(double negative_slope) {
  return {ActivationKind::kLeakyRelu, negative_slope};
}

void ActivationDesc::validate() const {
  require(kind == ActivationKind::kRelu || kind == ActivationKind::kLeakyRelu,
          ErrorKind::kInvalidArgument, "unknown activation kind ",
          static_cast<int>(kind));
  require(kind != ActivationKind::kLeakyRelu || std::isfinite(negative_slope),
          ErrorKind::kInvalidArgument, "leaky relu's negative slope ",
          negative_slope, " is not finite");
}

double ActivationDesc::slope() const {
  return kind == ActivationKind::kLeakyRelu ? negative_slope : 0.0;
}

bool ActivationDesc::keeps_sign() const { return slope() >= 0; }

const char* to_string(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::kRelu:
      return "relu";
    case ActivationKind::kLeakyRelu:
      return "leaky relu";
  }
  return "unknown";
}

}  // namespace distconv
