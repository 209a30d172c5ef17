#include "distconv/box.h"

namespace distconv {

bool Box::contains(const Shape& point) const {
  for (int d = 0; d < ndims(); ++d) {
    if (point[d] < lower[d] || point[d] >= lower[d] + extent[d]) return false;
  }
  return true;
}

bool Box::contains(const Box& inner) const {
  if (inner.empty()) return true;
  for (int d = 0; d < ndims(); ++d) {
    if (inner.lower[d] < lower[d] || inner.upper()[d] > upper()[d]) {
      return false;
    }
  }
  return true;
}

Box Box::expanded(const Shape& below, const Shape& above) const {
  return {lower - below, extent + below + above};
}

std::ostream& operator<<(std::ostream& out, const Box& b) {
  out << "[";
  for (int d = 0; d < b.ndims(); ++d) {
    out << (d ? ", " : "") << b.lower[d] << ":" << b.lower[d] + b.extent[d];
  }
  return out << ")";
}

Box intersect(const Box& a, const Box& b) {
  const Shape lo = max(a.lower, b.lower);
  Shape extent = min(a.upper(), b.upper()) - lo;
  for (int d = 0; d < extent.ndims(); ++d) {
    if (extent[d] < 0) extent[d] = 0;
  }
  return {lo, extent};
}

}  // namespace distconv
