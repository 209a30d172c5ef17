#include "distconv/box.h"

#include <utility>

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

std::vector<Box> subtract(const Box& a, const Box& b) {
  std::vector<Box> out;
  if (a.empty()) return out;
  const Box common = intersect(a, b);
  if (common.empty()) return {a};
  Box rest = a;  // what is left to split: shrinks to `common` dimension by
                 // dimension
  for (int d = 0; d < a.ndims(); ++d) {
    const Index lo = common.lower[d], hi = common.upper()[d];
    if (lo > rest.lower[d]) {
      Box below = rest;
      below.extent[d] = lo - rest.lower[d];
      out.push_back(below);
    }
    if (hi < rest.upper()[d]) {
      Box above = rest;
      above.lower[d] = hi;
      above.extent[d] = rest.upper()[d] - hi;
      out.push_back(above);
    }
    rest.lower[d] = lo;
    rest.extent[d] = hi - lo;
  }
  return out;
}

std::vector<Box> disjoint_union(const std::vector<Box>& boxes) {
  std::vector<Box> out;
  for (const Box& box : boxes) {
    // The part of `box` no earlier output covers.
    std::vector<Box> parts;
    if (!box.empty()) parts.push_back(box);
    for (const Box& seen : out) {
      std::vector<Box> next;
      for (const Box& part : parts) {
        for (const Box& left : subtract(part, seen)) next.push_back(left);
      }
      parts = std::move(next);
    }
    out.insert(out.end(), parts.begin(), parts.end());
  }
  return out;
}

}  // namespace distconv
