// The element types the extension module binds, each with the suffix its
// bindings' names carry (python/distconv/_tensors.py maps torch dtypes to
// these suffixes):
//  - layer types: what the layers compute in; bf16 and fp16 layers keep
//    their parameters and gradients in fp32 (Compute<T>);
//  - data types: what the functions that only move cells (shard, gather,
//    scatter, redistribution) carry as they are: the layer types and the
//    integer types of labels and masks (torch.bool and torch.int8 travel
//    as uint8, cells of the same size).
//
//   for_each_layer_type([&](auto tag, const std::string& suffix) {
//     using T = typename decltype(tag)::type;
//     py::class_<Module<T>>(m, ("Module" + suffix).c_str());
//   });
#ifndef DISTCONV_PYTHON_SRC_ELEMENT_TYPES_H_
#define DISTCONV_PYTHON_SRC_ELEMENT_TYPES_H_

#include <cstdint>
#include <string>

#include "distconv/element_types.h"

namespace distconv::python {

// The suffix of each type's bindings; a type without one does not link.
template <typename T>
const char* type_suffix();
template <>
inline const char* type_suffix<float>() {
  return "_f32";
}
template <>
inline const char* type_suffix<double>() {
  return "_f64";
}
template <>
inline const char* type_suffix<bf16>() {
  return "_bf16";
}
template <>
inline const char* type_suffix<fp16>() {
  return "_f16";
}

// The library's element types (distconv/element_types.h).
template <typename Fn>
void for_each_layer_type(Fn&& fn) {
  for_each_element_type([&](auto tag) {
    fn(tag, std::string(type_suffix<typename decltype(tag)::type>()));
  });
}

template <typename Fn>
void for_each_data_type(Fn&& fn) {
  for_each_layer_type(fn);
  fn(TypeTag<std::int64_t>{}, std::string("_i64"));
  fn(TypeTag<std::int32_t>{}, std::string("_i32"));
  fn(TypeTag<std::uint8_t>{}, std::string("_u8"));
}

}  // namespace distconv::python

#endif  // DISTCONV_PYTHON_SRC_ELEMENT_TYPES_H_
