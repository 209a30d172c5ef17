// Channels-last to oneDNN's 16-channel blocked layout (nChw16c /
// nCdhw16c), the layout its AVX-512 kernels are fastest with on some
// problems, and back. A copy of 64-byte rows: on these machines 3 ms for
// a 34 MB 8x64x128² tensor on one thread, where oneDNN 2.6's reorder (jit:uni)
// took 10 ms (docs/performance.md).
//
//   Shape shape{8, 64, 128, 128};                 // N, C, spatial...
//   std::vector<float> blocked(block16_size(shape));
//   channels_last_to_block16(shape, nhwc.data(), blocked.data());
#ifndef DISTCONV_KERNELS_ONEDNN_BLOCK16_H_
#define DISTCONV_KERNELS_ONEDNN_BLOCK16_H_

#include "distconv/shape.h"

namespace distconv::onednn {

constexpr Index kBlock = 16;

// Elements of the blocked array: channels rounded up to a multiple of 16.
Index block16_size(const Shape& shape);

// `src` is dense (N, spatial..., C); `dst` is (N, ceil(C / 16), spatial...,
// 16). Channels past C in the last block are left as they are (a plan
// zeroes them once).
void channels_last_to_block16(const Shape& shape, const float* src,
                              float* dst);
// The way back: the first C channels of each block into dense (N,
// spatial..., C).
void block16_to_channels_last(const Shape& shape, const float* src, float* dst);

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_BLOCK16_H_
