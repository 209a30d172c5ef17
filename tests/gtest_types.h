// The library's type lists (distconv/element_types.h) as GoogleTest's
// typed-test lists, so typed tests cover what the library instantiates.
//
//   TYPED_TEST_SUITE(NarrowLayers, GtestTypes<NarrowTypeList>);
#ifndef DISTCONV_TESTS_GTEST_TYPES_H_
#define DISTCONV_TESTS_GTEST_TYPES_H_

#include <gtest/gtest.h>

#include "distconv/element_types.h"

namespace distconv {

namespace internal {
template <typename List>
struct GtestTypesOf;
template <typename... T>
struct GtestTypesOf<TypeList<T...>> {
  using type = ::testing::Types<T...>;
};
}  // namespace internal

template <typename List>
using GtestTypes = typename internal::GtestTypesOf<List>::type;

}  // namespace distconv

#endif  // DISTCONV_TESTS_GTEST_TYPES_H_
