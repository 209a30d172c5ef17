// Which pass of a convolution a kernel is planned for.
#ifndef DISTCONV_KERNELS_CONV_PASS_H_
#define DISTCONV_KERNELS_CONV_PASS_H_

namespace distconv {

enum class ConvPass { kForward, kBackwardData, kBackwardWeights };

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CONV_PASS_H_
