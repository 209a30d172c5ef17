// Channels-last to oneDNN's channel-blocked layouts (nChw16c / nCdhw16c,
// the layout its AVX-512 kernels pick; nChw8c / nCdhw8c, its AVX2
// kernels'), and back, for blocks of 16 or 8 channels. A copy of rows of
// one block's channels (64 or 32 bytes): 3 ms for a 34 MB 8x64x128²
// tensor on one thread into 16-channel blocks on an AMD EPYC (AVX-512),
// where oneDNN 2.6's reorder (jit:uni) took 10 ms (docs/performance.md);
// on an AMD EPYC Zen 3 (AVX2), 34-41 GB/s read and written into
// 8-channel blocks from the cache, a memcpy's speed from memory
// (perf/blocked_copy_bench).
//
//   Shape shape{8, 64, 128, 128};                 // N, C, spatial...
//   std::vector<float> blocked(blocked_size(shape, 16));
//   channels_last_to_blocked(shape, 16, nhwc.data(), blocked.data());
#ifndef DISTCONV_KERNELS_ONEDNN_BLOCKED_H_
#define DISTCONV_KERNELS_ONEDNN_BLOCKED_H_

#include "distconv/shape.h"

namespace distconv::onednn {

// Elements of the array blocked by `block` channels: channels rounded up
// to a multiple of the block.
Index blocked_size(const Shape& shape, Index block);

// `src` is dense (N, spatial..., C); `dst` is (N, ceil(C / block),
// spatial..., block). Channels past C in the last block are left as they
// are (a plan zeroes them once).
void channels_last_to_blocked(const Shape& shape, Index block, const float* src,
                              float* dst);
// The way back: the first C channels of each block into dense (N,
// spatial..., C).
void blocked_to_channels_last(const Shape& shape, Index block, const float* src,
                              float* dst);

}  // namespace distconv::onednn

#endif  // DISTCONV_KERNELS_ONEDNN_BLOCKED_H_
