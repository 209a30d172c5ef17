#include "io/element_type.h"

namespace distconv::io {

const char* to_string(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kUint8:
      return "uint8";
    case ElementType::kBfloat16:
      return "bfloat16";
  }
  return "unknown";
}

std::size_t size_of(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return 4;
    case ElementType::kFloat64:
      return 8;
    case ElementType::kInt64:
      return 8;
    case ElementType::kUint8:
      return 1;
    case ElementType::kBfloat16:
      return 2;
  }
  return 0;
}

const char* npy_descr(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return "<f4";
    case ElementType::kFloat64:
      return "<f8";
    case ElementType::kInt64:
      return "<i8";
    case ElementType::kUint8:
      return "|u1";
    case ElementType::kBfloat16:
      return "";
  }
  return "";
}

}  // namespace distconv::io
