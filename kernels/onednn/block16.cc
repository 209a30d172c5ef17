#include "kernels/onednn/block16.h"

#include <algorithm>
#include <cstring>

namespace distconv::onednn {
namespace {

Index spatial_volume(const Shape& shape) {
  Index v = 1;
  for (int d = 2; d < shape.ndims(); ++d) v *= shape[d];
  return v;
}

Index blocks(Index channels) { return (channels + kBlock - 1) / kBlock; }

}  // namespace

Index block16_size(const Shape& shape) {
  return shape[0] * blocks(shape[1]) * kBlock * spatial_volume(shape);
}

void channels_last_to_block16(const Shape& shape, const float* src,
                              float* dst) {
  const Index c = shape[1], nb = blocks(c), points = spatial_volume(shape);
  for (Index n = 0; n < shape[0]; ++n) {
    const float* in = src + n * points * c;
    float* out = dst + n * nb * points * kBlock;
    // Point-major: each input row is read once, in order; each block's
    // 16 channels are one 64-byte row of the output.
    for (Index p = 0; p < points; ++p) {
      for (Index b = 0; b < nb; ++b) {
        const Index width = std::min(kBlock, c - b * kBlock);
        std::memcpy(out + (b * points + p) * kBlock, in + p * c + b * kBlock,
                    width * sizeof(float));
      }
    }
  }
}

void block16_to_channels_last(const Shape& shape, const float* src,
                              float* dst) {
  const Index c = shape[1], nb = blocks(c), points = spatial_volume(shape);
  for (Index n = 0; n < shape[0]; ++n) {
    const float* in = src + n * nb * points * kBlock;
    float* out = dst + n * points * c;
    for (Index p = 0; p < points; ++p) {
      for (Index b = 0; b < nb; ++b) {
        const Index width = std::min(kBlock, c - b * kBlock);
        std::memcpy(out + p * c + b * kBlock, in + (b * points + p) * kBlock,
                    width * sizeof(float));
      }
    }
  }
}

}  // namespace distconv::onednn
