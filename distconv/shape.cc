#include "distconv/shape.h"

#include <algorithm>
#include <sstream>

#include "distconv/error.h"

namespace distconv {
namespace {
void require_same_ndims(const Shape& a, const Shape& b) {
  require(a.ndims() == b.ndims(), ErrorKind::kShapeMismatch, "shapes ", a,
          " and ", b, " have different numbers of dimensions");
}
}  // namespace

Shape::Shape(std::initializer_list<Index> values) {
  require(values.size() <= kMaxDims, ErrorKind::kInvalidArgument,
          "a shape has at most ", kMaxDims, " dimensions, got ",
          values.size());
  ndims_ = static_cast<int>(values.size());
  std::copy(values.begin(), values.end(), v_.begin());
}

Shape Shape::filled(int ndims, Index value) {
  require(ndims >= 0 && ndims <= kMaxDims, ErrorKind::kInvalidArgument,
          "a shape has 0 to ", kMaxDims, " dimensions, got ", ndims);
  Shape s;
  s.ndims_ = ndims;
  for (int d = 0; d < ndims; ++d) s.v_[d] = value;
  return s;
}

Index Shape::volume() const {
  Index v = 1;
  for (Index x : *this) v *= x;
  return v;
}

std::string Shape::to_string() const {
  std::ostringstream out;
  for (int d = 0; d < ndims_; ++d) out << (d ? "x" : "") << v_[d];
  if (ndims_ == 0) out << "()";
  return out.str();
}

bool operator==(const Shape& a, const Shape& b) {
  return a.ndims_ == b.ndims_ && std::equal(a.begin(), a.end(), b.begin());
}

std::ostream& operator<<(std::ostream& out, const Shape& s) {
  return out << s.to_string();
}

#define DISTCONV_ELEMENTWISE(name, expr)          \
  Shape name(const Shape& a, const Shape& b) {    \
    require_same_ndims(a, b);                     \
    Shape r = a;                                  \
    for (int d = 0; d < a.ndims(); ++d) {         \
      const Index x = a[d], y = b[d];             \
      r[d] = (expr);                              \
    }                                             \
    return r;                                     \
  }
DISTCONV_ELEMENTWISE(operator+, x + y)
DISTCONV_ELEMENTWISE(operator-, x - y)
DISTCONV_ELEMENTWISE(min, std::min(x, y))
DISTCONV_ELEMENTWISE(max, std::max(x, y))
#undef DISTCONV_ELEMENTWISE

Shape operator-(const Shape& a) { return Shape::filled(a.ndims(), 0) - a; }

bool within(const Shape& index, const Shape& extent) {
  if (index.ndims() != extent.ndims()) return false;
  for (int d = 0; d < extent.ndims(); ++d) {
    if (index[d] < 0 || index[d] >= extent[d]) return false;
  }
  return true;
}

Shape row_major_strides(const Shape& extent) {
  Shape s = Shape::filled(extent.ndims(), 1);
  for (int d = extent.ndims() - 2; d >= 0; --d) s[d] = s[d + 1] * extent[d + 1];
  return s;
}

Index linear_index(const Shape& coord, const Shape& extent) {
  require_same_ndims(coord, extent);
  Index r = 0;
  for (int d = 0; d < extent.ndims(); ++d) r = r * extent[d] + coord[d];
  return r;
}

Shape unravel(Index index, const Shape& extent) {
  Shape c = Shape::filled(extent.ndims(), 0);
  for (int d = extent.ndims() - 1; d >= 0; --d) {
    c[d] = index % extent[d];
    index /= extent[d];
  }
  return c;
}

}  // namespace distconv
