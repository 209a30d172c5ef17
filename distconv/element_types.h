// The element types distconv's layers and kernels run on, listed once.
//
// Every explicit instantiation in the library expands one of these lists, so
// a new element type is added here and nowhere else:
//  - the compute types, float and double: what layers compute in and keep
//    parameters, gradients and sums in;
//  - the narrow types, bf16 and fp16: stored in 16 bits, computed in fp32
//    (Compute<T> is float for each);
//  - the element types: both lists, compute types first;
//  - the label types, int32, int64 and uint8: class labels, masks and
//    indices, which the data movers (shard, gather, scatter, copy_shard,
//    copy_view) carry but no layer computes on.
//
// Each list is an X-macro: it applies a one-argument macro to every type.
//
//   #define DISTCONV_INSTANTIATE(T) template class Pooling<T>;
//   DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
//   #undef DISTCONV_INSTANTIATE
//
// For code that iterates in C++ rather than in the preprocessor,
// ElementTypeList (and ComputeTypeList, NarrowTypeList) is the same list
// as a type, and for_each_element_type
// calls a function with a TypeTag of each type in order.
#ifndef DISTCONV_ELEMENT_TYPES_H_
#define DISTCONV_ELEMENT_TYPES_H_

#include <cstdint>
#include <type_traits>

#include "distconv/bf16.h"
#include "distconv/fp16.h"

#define DISTCONV_FOR_EACH_COMPUTE_TYPE(X) X(float) X(double)
#define DISTCONV_FOR_EACH_NARROW_TYPE(X) X(bf16) X(fp16)
#define DISTCONV_FOR_EACH_ELEMENT_TYPE(X) \
  DISTCONV_FOR_EACH_COMPUTE_TYPE(X) DISTCONV_FOR_EACH_NARROW_TYPE(X)
#define DISTCONV_FOR_EACH_LABEL_TYPE(X) \
  X(std::int32_t) X(std::int64_t) X(std::uint8_t)

namespace distconv {

// A type carried as a value, for generic lambdas.
template <typename T>
struct TypeTag {
  using type = T;
};

template <typename... T>
struct TypeList {
  static constexpr int size = sizeof...(T);
};

namespace internal {
// Builds a TypeList from an X-macro's expansion `void, A, B, ...` (the
// leading void lets every entry carry its own comma).
template <typename Void, typename... T>
struct ListAfterVoid {
  using type = TypeList<T...>;
};
}  // namespace internal

#define DISTCONV_ELEMENT_TYPES_ENTRY_(T) , T
using ElementTypeList =
    typename internal::ListAfterVoid<void DISTCONV_FOR_EACH_ELEMENT_TYPE(
        DISTCONV_ELEMENT_TYPES_ENTRY_)>::type;
using ComputeTypeList =
    typename internal::ListAfterVoid<void DISTCONV_FOR_EACH_COMPUTE_TYPE(
        DISTCONV_ELEMENT_TYPES_ENTRY_)>::type;
using NarrowTypeList =
    typename internal::ListAfterVoid<void DISTCONV_FOR_EACH_NARROW_TYPE(
        DISTCONV_ELEMENT_TYPES_ENTRY_)>::type;
#undef DISTCONV_ELEMENT_TYPES_ENTRY_

// Calls fn(TypeTag<T>{}) for each T of the list, in order.
template <typename... T, typename Fn>
void for_each_type(TypeList<T...>, Fn&& fn) {
  (fn(TypeTag<T>{}), ...);
}

template <typename Fn>
void for_each_element_type(Fn&& fn) {
  for_each_type(ElementTypeList{}, fn);
}

// A compute type computes in itself, a narrow type in fp32.
#define DISTCONV_ELEMENT_TYPES_CHECK_(T, C) \
  static_assert(std::is_same_v<Compute<T>, C>, "Compute<" #T "> is not " #C);
#define DISTCONV_ELEMENT_TYPES_COMPUTE_(T) DISTCONV_ELEMENT_TYPES_CHECK_(T, T)
#define DISTCONV_ELEMENT_TYPES_NARROW_(T) \
  DISTCONV_ELEMENT_TYPES_CHECK_(T, float)
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_ELEMENT_TYPES_COMPUTE_)
DISTCONV_FOR_EACH_NARROW_TYPE(DISTCONV_ELEMENT_TYPES_NARROW_)
#undef DISTCONV_ELEMENT_TYPES_NARROW_
#undef DISTCONV_ELEMENT_TYPES_COMPUTE_
#undef DISTCONV_ELEMENT_TYPES_CHECK_

}  // namespace distconv

#endif  // DISTCONV_ELEMENT_TYPES_H_
