// Internal: the local convolution kernel of a plan's ConvKernelCall.
//
//   std::optional<LocalConv<float>> k = local_conv_of<float>(piece.kernel);
#ifndef DISTCONV_LAYERS_INTERNAL_LOCAL_CONV_OF_H_
#define DISTCONV_LAYERS_INTERNAL_LOCAL_CONV_OF_H_

#include <optional>

#include "kernels/local_conv.h"
#include "layers/conv_kernel_call.h"

namespace distconv::internal {

// The kernel `call` describes; none where there is no call.
template <typename T>
std::optional<LocalConv<T>> local_conv_of(
    const std::optional<ConvKernelCall>& call) {
  std::optional<LocalConv<T>> kernel;
  if (call) {
    kernel.emplace(call->desc, call->src_extent, call->src_strides,
                   call->dst_extent, call->dst_strides, call->pass);
  }
  return kernel;
}

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_LOCAL_CONV_OF_H_
