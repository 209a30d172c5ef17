// Test helper: whether host code can read a view's elements, detected at
// compile time, so tests can show that a view of memory the host may not
// read (GPU memory) offers no element access.
//
//   static_assert(!testing::kHostIndexable<StridedView<float, DeviceSpace>>);
#ifndef DISTCONV_TESTS_VIEW_ACCESS_H_
#define DISTCONV_TESTS_VIEW_ACCESS_H_

#include <type_traits>
#include <utility>

#include "distconv/shape.h"

namespace distconv::testing {

template <typename View, typename = void>
struct HostIndexable : std::false_type {};
template <typename View>
struct HostIndexable<View, std::void_t<decltype(std::declval<const View&>()(
                               std::declval<const Shape&>()))>>
    : std::true_type {};

struct IgnoreCell {  // a callable for for_each
  template <typename... Args>
  void operator()(Args&&...) const {}
};

template <typename View, typename = void>
struct HostIterable : std::false_type {};
template <typename View>
struct HostIterable<
    View,
    std::void_t<decltype(std::declval<const View&>().for_each(IgnoreCell{}))>>
    : std::true_type {};

// Element access of either kind: operator() or for_each.
template <typename View>
inline constexpr bool kHostIndexable =
    HostIndexable<View>::value || HostIterable<View>::value;

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_VIEW_ACCESS_H_
