// The element types distconv reads and writes, and their names in files.
//
//   element_type<float>();               // ElementType::kFloat32
//   to_string(ElementType::kInt64);      // "int64"
//   npy_descr(ElementType::kFloat64);    // "<f8"
#ifndef DISTCONV_IO_ELEMENT_TYPE_H_
#define DISTCONV_IO_ELEMENT_TYPE_H_

#include <cstddef>
#include <cstdint>

namespace distconv::io {

enum class ElementType { kFloat32, kFloat64, kInt64, kUint8 };

template <typename T>
constexpr ElementType element_type();
template <>
constexpr ElementType element_type<float>() {
  return ElementType::kFloat32;
}
template <>
constexpr ElementType element_type<double>() {
  return ElementType::kFloat64;
}
template <>
constexpr ElementType element_type<std::int64_t>() {
  return ElementType::kInt64;
}
template <>
constexpr ElementType element_type<std::uint8_t>() {
  return ElementType::kUint8;
}

const char* to_string(ElementType type);  // "float32", "float64", ...
std::size_t size_of(ElementType type);    // bytes per element
// NumPy's little-endian type string: "<f4", "<f8", "<i8", "|u1".
const char* npy_descr(ElementType type);

}  // namespace distconv::io

#endif  // DISTCONV_IO_ELEMENT_TYPE_H_
