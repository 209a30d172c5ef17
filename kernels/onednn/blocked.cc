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

// Which way a copy goes.
enum class Direction { kToBlocked, kToChannelsLast };

// One sample: `points` rows of `c` channels (channels-last) to or from
// blocks of kBlock channels, point-major: each channels-last row is read
// (written) once, in order, each block's channels are one row of the
// blocked array. A full block is a memcpy of a size the compiler knows,
// which it inlines as vector moves (a memcpy call per block, of a size it
// does not know, ran at 0.35-0.45 of that speed on arrays in the cache:
// perf/blocked_copy_bench);
// the last block, where `c` does not fill it, copies what it holds.
template <Index kBlock, Direction kDir>
void copy_sample(Index points, Index c, const float* from, float* to) {
  const Index full = c / kBlock, rest = c - full * kBlock;
  constexpr bool kTo = kDir == Direction::kToBlocked;
  for (Index p = 0; p < points; ++p) {
    for (Index b = 0; b < full; ++b) {
      const Index cl = p * c + b * kBlock, blocked = (b * points + p) * kBlock;
      std::memcpy(to + (kTo ? blocked : cl), from + (kTo ? cl : blocked),
                  kBlock * sizeof(float));
    }
    if (rest > 0) {
      const Index cl = p * c + full * kBlock,
                  blocked = (full * points + p) * kBlock;
      std::memcpy(to + (kTo ? blocked : cl), from + (kTo ? cl : blocked),
                  rest * sizeof(float));
    }
  }
}

template <Direction kDir>
void copy(const Shape& shape, Index block, const float* from, float* to) {
  const Index c = shape[1], points = spatial_volume(shape);
  const Index cl_size = points * c,
              blocked_size = blocks(c, block) * points * block;
  const bool kTo = kDir == Direction::kToBlocked;
  for (Index n = 0; n < shape[0]; ++n) {
    const float* in = from + n * (kTo ? cl_size : blocked_size);
    float* out = to + n * (kTo ? blocked_size : cl_size);
    if (block == 16) {
      copy_sample<16, kDir>(points, c, in, out);
    } else {
      copy_sample<8, kDir>(points, c, in, out);
    }
  }
}

}  // namespace

Index blocked_size(const Shape& shape, Index block) {
  return shape[0] * blocks(shape[1], block) * block * spatial_volume(shape);
}

void channels_last_to_blocked(const Shape& shape, Index block, const float* src,
                              float* dst) {
  copy<Direction::kToBlocked>(shape, block, src, dst);
}

void blocked_to_channels_last(const Shape& shape, Index block, const float* src,
                              float* dst) {
  copy<Direction::kToChannelsLast>(shape, block, src, dst);
}

}  // namespace distconv::onednn
