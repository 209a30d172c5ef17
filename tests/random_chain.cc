#include "tests/random_chain.h"

#include <algorithm>
#include <random>
#include <sstream>

#include "distconv/error.h"

namespace distconv::testing {
namespace {

// Spatial extents stay small, so that a case takes milliseconds.
constexpr Index kMaxSpatial = 20;
constexpr Index kMaxChannels = 8;

class Draw {
 public:
  explicit Draw(std::uint64_t seed)
      : rng_(seed), side_(seed ^ 0x9e3779b97f4a7c15ull) {}
  // Uniform in [lo, hi].
  Index in(Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  Shape shape(int n, Index lo, Index hi) {
    Shape s = Shape::filled(n, 1);
    for (int d = 0; d < n; ++d) s[d] = in(lo, hi);
    return s;
  }
  // Padding modes for a description whose other fields are drawn and
  // valid: circular with probability 1/3 where the padding is no wider
  // than `extent` (the input's; the output's for a transposed
  // convolution). From a stream of their own, so that adding them left
  // every other field of a seed's chain as it was.
  template <typename Desc>
  void padding_modes(Desc& d, const Shape& extent) {
    const int sd = d.spatial_dims();
    d.padding_mode.assign(sd, PaddingMode::kZeros);
    for (int j = 0; j < sd; ++j) {
      const bool fits = d.padding_lower[j] <= extent[j + 2] &&
                        d.padding_upper[j] <= extent[j + 2];
      if (std::bernoulli_distribution(1.0 / 3)(side_) && fits) {
        d.padding_mode[j] = PaddingMode::kCircular;
      }
    }
  }

 private:
  std::mt19937_64 rng_, side_;
};

Index gcd(Index a, Index b) { return b == 0 ? a : gcd(b, a % b); }

// A random divisor of n (>= 1).
Index divisor_of(Index n, Draw& draw) {
  std::vector<Index> ds;
  for (Index d = 1; d <= n; ++d) {
    if (n % d == 0) ds.push_back(d);
  }
  return ds[static_cast<size_t>(draw.in(0, Index(ds.size()) - 1))];
}

bool fits(const Shape& dst) {
  for (int d = 2; d < dst.ndims(); ++d) {
    if (dst[d] > kMaxSpatial) return false;
  }
  return dst[1] <= kMaxChannels;
}

// Random descriptions until one gives a valid, small output; false after
// many tries (the caller draws another kind).
template <typename Make>
bool draw_until_valid(Make make, const Shape& src) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    try {
      if (fits(make(src))) return true;
    } catch (const Error&) {
    }
  }
  return false;
}

// A convolution's or transposed convolution's fields from `c` input
// channels: up to 6 outputs, a group count dividing both, kernel, stride,
// dilation, asymmetric padding.
template <typename Desc>
void draw_sliding(Desc& d, Index c, int sd, Draw& draw) {
  const Index f = draw.in(1, 6);
  const Index groups = divisor_of(gcd(c, f), draw);
  d = Desc::make(c, f, draw.shape(sd, 1, 4));
  d.groups = groups;
  d.stride = draw.shape(sd, 1, 3);
  d.dilation = draw.shape(sd, 1, 2);
  d.padding_lower = draw.shape(sd, 0, 2);
  d.padding_upper = draw.shape(sd, 0, 2);
}

ConvBias draw_bias(Draw& draw) {
  return draw.chance(0.5) ? ConvBias::kAdd : ConvBias::kNone;
}

ChainOp draw_op(const Shape& src, Draw& draw) {
  const int sd = src.ndims() - 2;
  const Index c = src[1];
  ChainOp op;
  for (;;) {
    op.kind = static_cast<ChainOpKind>(draw.in(0, 9));
    switch (op.kind) {
      case ChainOpKind::kConvolution:
        if (draw_until_valid(
                [&](const Shape& s) {
                  draw_sliding(op.conv, c, sd, draw);
                  op.conv.bias = draw_bias(draw);
                  draw.padding_modes(op.conv, s);
                  return op.conv.dst_shape(s);
                },
                src)) {
          return op;
        }
        break;
      case ChainOpKind::kDeconvolution:
        if (draw_until_valid(
                [&](const Shape& s) {
                  draw_sliding(op.deconv, c, sd, draw);
                  op.deconv.output_padding = Shape::filled(sd, 0);
                  for (int d = 0; d < sd; ++d) {
                    op.deconv.output_padding[d] =
                        draw.in(0, op.deconv.stride[d] - 1);
                  }
                  op.deconv.bias = draw_bias(draw);
                  const Shape out = op.deconv.dst_shape(s);
                  draw.padding_modes(op.deconv, out);
                  return out;
                },
                src)) {
          return op;
        }
        break;
      case ChainOpKind::kPooling:
        if (draw_until_valid(
                [&](const Shape& s) {
                  const auto kind = static_cast<PoolKind>(draw.in(0, 2));
                  op.pool = PoolDesc::make(kind, draw.shape(sd, 1, 3));
                  op.pool.stride = draw.shape(sd, 1, 3);
                  op.pool.padding_lower = op.pool.padding_upper =
                      Shape::filled(sd, 0);
                  for (int d = 0; d < sd; ++d) {
                    op.pool.padding_lower[d] = draw.in(0, op.pool.kernel[d] - 1);
                    op.pool.padding_upper[d] = draw.in(0, op.pool.kernel[d] - 1);
                  }
                  draw.padding_modes(op.pool, s);
                  return op.pool.dst_shape(s);
                },
                src)) {
          return op;
        }
        break;
      case ChainOpKind::kBatchNorm:
        return op;
      case ChainOpKind::kActivation:
        op.activation = draw.chance(0.3)
                            ? ActivationDesc::relu()
                            : ActivationDesc::leaky_relu(0.1 * double(draw.in(
                                                                   1, 5)));
        return op;
      case ChainOpKind::kConcat:
        if (2 * c <= kMaxChannels) return op;
        break;
      case ChainOpKind::kGroupNorm:
        op.groups = divisor_of(c, draw);
        return op;
      case ChainOpKind::kInterpolate:
        op.interpolate = InterpolateDesc::of_size(draw.shape(sd, 1, 12));
        if (draw.chance(0.5)) op.interpolate.align_corners = AlignCorners::kYes;
        return op;
      case ChainOpKind::kAdaptivePool:
        op.adaptive = {draw.chance(0.5) ? AdaptivePoolKind::kMax
                                        : AdaptivePoolKind::kAverage,
                       draw.shape(sd, 1, 6)};
        return op;
      case ChainOpKind::kDropout:
        op.dropout = 0.1 * double(draw.in(1, 6));
        op.dropout_channels = draw.chance(0.5);
        return op;
    }
  }
}

// Whether `op` on an input of `src` may run on a grid splitting channels.
bool splits_channels(const ChainOp& op, const Shape& src) {
  switch (op.kind) {
    case ChainOpKind::kConvolution:
      return op.conv.groups == 1;
    case ChainOpKind::kPooling:
    case ChainOpKind::kBatchNorm:
    case ChainOpKind::kActivation:
    case ChainOpKind::kInterpolate:
    case ChainOpKind::kAdaptivePool:
    case ChainOpKind::kDropout:
      return true;
    case ChainOpKind::kGroupNorm:  // random parts would cut larger groups
      return op.groups == src[1];
    case ChainOpKind::kDeconvolution:
    case ChainOpKind::kConcat:
      return false;
  }
  return false;
}

// A grid of `ranks` parts over `shape`'s dimensions (channels only if
// `channels`), each prime factor in a random dimension.
Shape draw_grid(const Shape& shape, int ranks, bool channels, Draw& draw) {
  std::vector<int> dims;
  for (int d = 0; d < shape.ndims(); ++d) {
    if (d != 1 || channels) dims.push_back(d);
  }
  Shape grid = Shape::filled(shape.ndims(), 1);
  int left = ranks;
  for (int p = 2; left > 1; ++p) {
    while (left % p == 0) {
      const int d = dims[static_cast<size_t>(
          draw.in(0, Index(dims.size()) - 1))];
      grid[d] *= p;
      left /= p;
    }
  }
  return grid;
}

// Balanced, or random cuts (empty parts likely when n is small).
BlockPartition draw_partition(Index n, int parts, Draw& draw) {
  if (parts == 1 || draw.chance(0.5)) return BlockPartition::balanced(n, parts);
  std::vector<Index> cuts(static_cast<size_t>(parts - 1));
  for (Index& cut : cuts) cut = draw.in(0, n);
  std::sort(cuts.begin(), cuts.end());
  std::vector<Index> sizes;
  Index last = 0;
  for (Index cut : cuts) {
    sizes.push_back(cut - last);
    last = cut;
  }
  sizes.push_back(n - last);
  return BlockPartition::from_sizes(sizes);
}

std::string dims(const Shape& s) {
  std::ostringstream out;
  for (int d = 0; d < s.ndims(); ++d) out << (d ? "x" : "") << s[d];
  return out.str();
}

// "1x2/0x1", with " circular HxW" naming the dimensions that wrap.
template <typename Desc>
std::string padding(const Desc& d) {
  std::string out = dims(d.padding_lower) + "/" + dims(d.padding_upper);
  std::string wrap;
  const char* names[] = {"D", "H", "W"};
  for (int j = 0; j < d.spatial_dims(); ++j) {
    if (d.circular(j)) wrap += names[3 - d.spatial_dims() + j];
  }
  return wrap.empty() ? out : out + " circular " + wrap;
}

const char* bias(ConvBias b) { return b == ConvBias::kAdd ? " bias" : ""; }

}  // namespace

Shape ChainOp::dst_shape() const {
  const Shape src_shape = src_distribution().global_shape();
  switch (kind) {
    case ChainOpKind::kConvolution:
      return conv.dst_shape(src_shape);
    case ChainOpKind::kDeconvolution:
      return deconv.dst_shape(src_shape);
    case ChainOpKind::kPooling:
      return pool.dst_shape(src_shape);
    case ChainOpKind::kConcat: {
      Shape s = src_shape;
      s[1] *= 2;
      return s;
    }
    case ChainOpKind::kInterpolate:
      return interpolate.dst_shape(src_shape);
    case ChainOpKind::kAdaptivePool:
      return adaptive.dst_shape(src_shape);
    case ChainOpKind::kBatchNorm:
    case ChainOpKind::kActivation:
    case ChainOpKind::kGroupNorm:
    case ChainOpKind::kDropout:
      break;
  }
  return src_shape;
}

std::string ChainOp::describe() const {
  std::ostringstream out;
  switch (kind) {
    case ChainOpKind::kConvolution:
      out << "conv " << conv.in_channels << "->" << conv.out_channels << " k"
          << dims(conv.kernel) << " s" << dims(conv.stride) << " d"
          << dims(conv.dilation) << " pad "
          << padding(conv) << " g"
          << conv.groups << bias(conv.bias);
      break;
    case ChainOpKind::kDeconvolution:
      out << "deconv " << deconv.in_channels << "->" << deconv.out_channels
          << " k" << dims(deconv.kernel) << " s" << dims(deconv.stride)
          << " d" << dims(deconv.dilation) << " pad "
          << padding(deconv) << " outpad "
          << dims(deconv.output_padding) << " g" << deconv.groups
          << bias(deconv.bias);
      break;
    case ChainOpKind::kPooling:
      out << "pool " << to_string(pool.kind) << " k" << dims(pool.kernel)
          << " s" << dims(pool.stride) << " pad "
          << padding(pool);
      break;
    case ChainOpKind::kBatchNorm:
      out << "batch norm";
      break;
    case ChainOpKind::kActivation:
      out << to_string(activation.kind) << " " << activation.negative_slope;
      break;
    case ChainOpKind::kConcat:
      out << "concat with itself";
      break;
    case ChainOpKind::kGroupNorm:
      out << "group norm, " << groups << " groups";
      break;
    case ChainOpKind::kInterpolate:
      out << "linear interpolation to " << dims(interpolate.size)
          << (interpolate.align_corners == AlignCorners::kYes
                  ? ", aligned corners"
                  : "");
      break;
    case ChainOpKind::kAdaptivePool:
      out << "adaptive " << to_string(adaptive.kind) << " pooling to "
          << dims(adaptive.size);
      break;
    case ChainOpKind::kDropout:
      out << "dropout of " << (dropout_channels ? "channels" : "elements")
          << ", p " << dropout;
      break;
  }
  const Distribution d = src_distribution();
  out << " on " << d.global_shape() << "; grid " << d.grid_shape()
      << ", parts";
  for (int i = 0; i < d.ndims(); ++i) {
    out << (i ? " |" : " ");
    for (int p = 0; p < d.partition(i).parts(); ++p) {
      out << (p ? "," : "") << d.partition(i).size(p);
    }
  }
  return out.str();
}

Shape Chain::input_shape() const {
  return ops.front().src_distribution().global_shape();
}

Shape Chain::output_shape() const { return ops.back().dst_shape(); }

std::string Chain::describe() const {
  std::ostringstream out;
  out << "seed " << seed << " on " << ranks << " ranks:";
  for (const ChainOp& op : ops) out << "\n  " << op.describe();
  return out.str();
}

Chain random_chain(std::uint64_t seed, int ranks) {
  require(ranks >= 1, ErrorKind::kInvalidArgument, "random_chain needs ",
          "at least one rank, got ", ranks);
  Draw draw(seed);
  Chain chain;
  chain.seed = seed;
  chain.ranks = ranks;
  const int sd = draw.chance(0.7) ? 2 : 3;
  Shape shape = Shape::filled(sd + 2, 1);
  shape[0] = draw.in(1, 3);
  shape[1] = draw.in(1, 4);
  for (int d = 2; d < shape.ndims(); ++d) {
    shape[d] = draw.in(sd == 2 ? 4 : 3, sd == 2 ? 16 : 8);
  }
  const Index length = draw.in(1, 4);
  for (Index k = 0; k < length; ++k) {
    ChainOp op = draw_op(shape, draw);
    const Shape grid =
        draw_grid(shape, ranks, splits_channels(op, shape), draw);
    for (int d = 0; d < shape.ndims(); ++d) {
      op.src.push_back(draw_partition(shape[d], int(grid[d]), draw));
    }
    shape = op.dst_shape();
    chain.ops.push_back(std::move(op));
  }
  return chain;
}

}  // namespace distconv::testing
