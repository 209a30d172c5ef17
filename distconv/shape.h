// Shape: a small fixed-capacity vector of indices (at most 5), used for
// global tensor shapes, grid shapes, coordinates, offsets and halo widths.
//
// Dimension order is the natural one: index 0 is N, then C, then D, H, W.
//
//   Shape x{8, 64, 512, 512};          // (N, C, H, W)
//   x.volume();                        // 8*64*512*512
//   Index r = linear_index({1, 0, 3, 2}, x);   // row-major, W fastest
//   Shape c = unravel(r, x);           // back to {1, 0, 3, 2}
#ifndef DISTCONV_SHAPE_H_
#define DISTCONV_SHAPE_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>

namespace distconv {

using Index = std::int64_t;
inline constexpr int kMaxDims = 5;

class Shape {
 public:
  Shape() = default;  // zero dimensions
  Shape(std::initializer_list<Index> values);
  static Shape filled(int ndims, Index value);

  int ndims() const { return ndims_; }
  Index operator[](int d) const { return v_[d]; }
  Index& operator[](int d) { return v_[d]; }
  const Index* begin() const { return v_.data(); }
  const Index* end() const { return v_.data() + ndims_; }

  Index volume() const;  // product of the entries; 1 for zero dimensions
  std::string to_string() const;  // "8x64x512x512"

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::array<Index, kMaxDims> v_{};
  int ndims_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Shape& s);

// Element-wise arithmetic; both operands must have the same ndims.
Shape operator+(const Shape& a, const Shape& b);
Shape operator-(const Shape& a, const Shape& b);
Shape operator-(const Shape& a);
Shape min(const Shape& a, const Shape& b);
Shape max(const Shape& a, const Shape& b);

// Whether `index` has extent's ndims and 0 <= index[d] < extent[d].
bool within(const Shape& index, const Shape& extent);

// Row-major (last dimension fastest) strides of a contiguous array.
Shape row_major_strides(const Shape& extent);
// Row-major position of `coord` inside `extent`, and its inverse.
Index linear_index(const Shape& coord, const Shape& extent);
Shape unravel(Index index, const Shape& extent);

}  // namespace distconv

#endif  // DISTCONV_SHAPE_H_
