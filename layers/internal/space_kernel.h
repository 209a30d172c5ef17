// Internal: a layer's per-rank kernel in a memory space, made from the
// space's execution context (distconv/exec.h) and the layer's kernel call
// (a value: what to compute on which views, from the plan). One template
// for every layer and space, in place of a backend class per layer: the
// .cc that instantiates a layer for a space specialises it for the
// layer's call,
//
//   template <typename T>
//   struct SpaceKernel<PoolKernelCall, T, HostSpace> {
//     using type = LocalPool<T>;
//     static type make(const Exec<HostSpace>&, const PoolKernelCall&);
//   };
//
// and the layer's template, written once for every space, makes it:
//
//   auto kernel = make_kernel<T>(exec, call);
//
// make_kernel checks at compile time that the kernel has the call's
// interface: KernelInterface<Call>::passes<K, T, Space>, declared beside
// the layer's template, names the calls the layer makes on the space's
// views. A new memory space specialises SpaceKernel once per call; a new
// layer declares its call and interface and a kernel per space.
#ifndef DISTCONV_LAYERS_INTERNAL_SPACE_KERNEL_H_
#define DISTCONV_LAYERS_INTERNAL_SPACE_KERNEL_H_

#include <type_traits>
#include <utility>

#include "distconv/exec.h"
#include "distconv/strided_view.h"

namespace distconv::internal {

template <typename Call, typename T, typename Space>
struct SpaceKernel;

// Specialised for each Call with a member alias template
//   template <typename K, typename T, typename Space> using passes = ...;
// well-formed exactly when K has the calls the layer makes.
template <typename Call>
struct KernelInterface;

template <typename Call, typename T, typename Space>
using SpaceKernelOf = typename SpaceKernel<Call, T, Space>::type;

// The two passes of a layer that maps src to dst (forward(src, dst)) and
// back (backward(a, b, diff_src): two read-only views, the gradient
// written), on the space's views; part of such layers' interfaces.
template <typename K, typename T, typename Space>
using ForwardBackward =
    decltype(std::declval<const K&>().forward(
                 std::declval<const StridedView<const T, Space>&>(),
                 std::declval<const StridedView<T, Space>&>()),
             std::declval<const K&>().backward(
                 std::declval<const StridedView<const T, Space>&>(),
                 std::declval<const StridedView<const T, Space>&>(),
                 std::declval<const StridedView<T, Space>&>()));

template <typename Void, template <typename...> class Op, typename... Args>
struct Detected : std::false_type {};
template <template <typename...> class Op, typename... Args>
struct Detected<std::void_t<Op<Args...>>, Op, Args...> : std::true_type {};

template <typename Call, typename K, typename T, typename Space>
inline constexpr bool kHasInterface =
    Detected<void, KernelInterface<Call>::template passes, K, T, Space>::value;

// `options`: what a layer's kernel takes besides (the convolution's: the
// GPU's cuDNN options), passed on to make().
template <typename T, typename Call, typename Space, typename... Options>
SpaceKernelOf<Call, T, Space> make_kernel(const Exec<Space>& exec,
                                          const Call& call,
                                          const Options&... options) {
  static_assert(kHasInterface<Call, SpaceKernelOf<Call, T, Space>, T, Space>,
                "this space's kernel lacks a call of the layer's interface "
                "(KernelInterface<Call>::passes)");
  return SpaceKernel<Call, T, Space>::make(exec, call, options...);
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_SPACE_KERNEL_H_
