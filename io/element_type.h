// The element types distconv reads and writes, and their names in files.
//
//   element_type<float>();               // ElementType::kFloat32
//   to_string(ElementType::kInt64);      // "int64"
//   npy_descr(ElementType::kFloat64);    // "<f8"
//
// bfloat16 (distconv/bf16.h) is stored in HDF5 as a floating-point type of
// 2 bytes with fp32's sign and exponent and 7 mantissa bits, which h5py
// reads as float32; NumPy has no bfloat16, so .npy files cannot hold it.
#ifndef DISTCONV_IO_ELEMENT_TYPE_H_
#define DISTCONV_IO_ELEMENT_TYPE_H_

#include <cstddef>
#include <cstdint>

#include "distconv/bf16.h"

namespace distconv::io {

enum class ElementType { kFloat32, kFloat64, kInt64, kUint8, kBfloat16 };

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
template <>
constexpr ElementType element_type<bf16>() {
  return ElementType::kBfloat16;
}

const char* to_string(ElementType type);  // "float32", ..., "bfloat16"
std::size_t size_of(ElementType type);    // bytes per element
// NumPy's little-endian type string: "<f4", "<f8", "<i8", "|u1"; "" for
// bfloat16 (NumPy has none).
const char* npy_descr(ElementType type);

}  // namespace distconv::io

#endif  // DISTCONV_IO_ELEMENT_TYPE_H_
