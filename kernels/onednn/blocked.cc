#include "kernels/onednn/blocked.h"

#include <algorithm>
#include <cstring>

namespace distconv::onednn {
namespace {

Index spatial_volume(const Shape& shape) {
  Index v = 1;
  for (int d = 2; d < shape.ndims(); ++d) v *= shape[d];
  return v;
}

Index blocks(Index channels, Index block) {
  return (channels + block - 1) / block;
}

}  // namespace

Index blocked_size(const Shape& shape, Index block) {
  return shape[0] * blocks(shape[1], block) * block * spatial_volume(shape);
}

void channels_last_to_blocked(const Shape& shape, Index block, const float* src,
                              float* dst) {
  const Index c = shape[1], nb = blocks(c, block),
              points = spatial_volume(shape);
  for (Index n = 0; n < shape[0]; ++n) {
    const float* in = src + n * points * c;
    float* out = dst + n * nb * points * block;
    // Point-major: each input row is read once, in order; each block's
    // channels are one row of the output.
    for (Index p = 0; p < points; ++p) {
      for (Index b = 0; b < nb; ++b) {
        const Index width = std::min(block, c - b * block);
        std::memcpy(out + (b * points + p) * block, in + p * c + b * block,
                    width * sizeof(float));
      }
    }
  }
}

void blocked_to_channels_last(const Shape& shape, Index block, const float* src,
                              float* dst) {
  const Index c = shape[1], nb = blocks(c, block),
              points = spatial_volume(shape);
  for (Index n = 0; n < shape[0]; ++n) {
    const float* in = src + n * nb * points * block;
    float* out = dst + n * points * c;
    for (Index p = 0; p < points; ++p) {
      for (Index b = 0; b < nb; ++b) {
        const Index width = std::min(block, c - b * block);
        std::memcpy(out + p * c + b * block, in + (b * points + p) * block,
                    width * sizeof(float));
      }
    }
  }
}

}  // namespace distconv::onednn
