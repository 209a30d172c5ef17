// Test helpers for the local kernels: views embedded in larger
// buffers (as a rank's shard sits inside its halos), dense copies of views,
// and random convolution and pooling problems.
#ifndef DISTCONV_KERNELS_VIEW_TESTING_H_
#define DISTCONV_KERNELS_VIEW_TESTING_H_

#include <optional>
#include <random>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/pool_desc.h"
#include "distconv/strided_view.h"
#include "kernels/copy_view.h"

namespace distconv::testing {

// A view of `extent` inside a larger buffer stored in `order` (or exactly
// dense), with the buffer behind it.
template <typename T>
struct Embedded {
  std::vector<T> buffer;
  StridedView<T> view{nullptr, Shape{}, Shape{}};
};

template <typename T>
Embedded<T> embed(const Shape& extent, std::mt19937_64& rng, bool dense,
                  StorageOrder order = StorageOrder::kChannelsLast) {
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int n = extent.ndims();
  Shape outer = extent, offset = Shape::filled(n, 0);
  if (!dense) {
    for (int d = 0; d < n; ++d) {
      if (d == 1) continue;  // channels stay whole (what the layer does)
      offset[d] = u(0, 1);
      outer[d] = extent[d] + offset[d] + u(0, 1);
    }
  }
  const Shape strides = dense_strides(outer, order);
  Embedded<T> e;
  e.buffer.assign(outer.volume(), T(-7));
  e.view = StridedView<T>(e.buffer.data(), outer, strides)
               .subview(Box{offset, extent});
  return e;
}

// A view of `extent` inside a buffer grown by `pad` on both sides of the
// spatial dimensions, stored in `order`; the buffer holds `fill`.
template <typename T>
struct Padded {
  std::vector<T> buffer;
  StridedView<T> view{nullptr, Shape{}, Shape{}};
  Padded(const Shape& extent, Index pad, StorageOrder order, T fill) {
    Shape outer = extent, lower = Shape::filled(extent.ndims(), 0);
    for (int d = 2; d < extent.ndims(); ++d) {
      outer[d] += 2 * pad;
      lower[d] = pad;
    }
    buffer.assign(outer.volume(), fill);
    view = StridedView<T>(buffer.data(), outer, dense_strides(outer, order))
               .subview(Box{lower, extent});
  }
};

template <typename T>
std::vector<T> dense_of(StridedView<T> v) {
  std::vector<T> out(v.size());
  copy_view<T>(v, StridedView<T>::contiguous(out.data(), v.extent()));
  return out;
}

// A random convolution problem for the kernel tests: 2D or 3D, 1 or 2
// groups of 1 to `max_group_channels` channels and filters each, kernel
// extents 1-3, stride and dilation 1-2, padding 0-2 on either side,
// spatial extents 3 to `max_extent`, 1-3 samples, bias or not. None where
// the draw does not make a valid problem (a kernel wider than the padded
// input).
struct ConvProblem {
  ConvDesc desc;
  Shape src;  // N, C, spatial...
};

inline std::optional<ConvProblem> random_conv_problem(std::mt19937_64& rng,
                                                      Index max_group_channels,
                                                      Index max_extent) {
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int k = u(2, 3);
  const Index g = u(1, 2);
  ConvDesc c =
      ConvDesc::make(g * u(1, max_group_channels), g * u(1, max_group_channels),
                     Shape::filled(k, 1));
  c.groups = g;
  c.bias = u(0, 1) ? ConvBias::kAdd : ConvBias::kNone;
  Shape src = Shape::filled(k + 2, 0);
  src[0] = u(1, 3);
  src[1] = c.in_channels;
  for (int j = 0; j < k; ++j) {
    c.kernel[j] = u(1, 3);
    c.stride[j] = u(1, 2);
    c.dilation[j] = u(1, 2);
    c.padding_lower[j] = u(0, 2);
    c.padding_upper[j] = u(0, 2);
    src[j + 2] = u(3, max_extent);
  }
  try {
    c.validate(src);
  } catch (const Error&) {
    return std::nullopt;
  }
  return ConvProblem{c, src};
}

// A random pooling problem: 2D or 3D, any kind, kernel extents and
// strides 1-3, padding below the kernel on either side, spatial extents 2
// to `max_extent`, 1-2 samples, 1 to `max_channels` channels. None where
// the draw does not make a valid problem.
struct PoolProblem {
  PoolDesc desc;
  Shape src;  // N, C, spatial...
};

inline std::optional<PoolProblem> random_pool_problem(std::mt19937_64& rng,
                                                      Index max_channels,
                                                      Index max_extent) {
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  const int k = static_cast<int>(u(2, 3));
  PoolDesc p =
      PoolDesc::make(static_cast<PoolKind>(u(0, 2)), Shape::filled(k, 1));
  Shape src = Shape::filled(k + 2, 0);
  src[0] = u(1, 2);
  src[1] = u(1, max_channels);
  for (int j = 0; j < k; ++j) {
    p.kernel[j] = u(1, 3);
    p.stride[j] = u(1, 3);
    p.padding_lower[j] = u(0, p.kernel[j] - 1);
    p.padding_upper[j] = u(0, p.kernel[j] - 1);
    src[j + 2] = u(2, max_extent);
  }
  try {
    p.validate(src);
  } catch (const Error&) {
    return std::nullopt;
  }
  return PoolProblem{p, src};
}

}  // namespace distconv::testing

#endif  // DISTCONV_KERNELS_VIEW_TESTING_H_
