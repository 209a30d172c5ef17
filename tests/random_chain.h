// Random chains of distributed layers, for differential testing against
// the same chain on one process (tests/random_chain_test.cc). A seed and
// a rank count give the chain: 2D or 3D, 1 to 4 operations drawn from
//   convolution (kernel, stride, dilation, asymmetric padding, groups,
//   bias), transposed convolution (kernel, stride, dilation, padding,
//   output padding, groups, bias), pooling (max, average with or without
//   padding), batch norm (global statistics, training), ReLU and leaky
//   ReLU, and concatenation of a tensor with itself; the padding of the
//   first three zeros or circular per dimension; group normalisation
//   (groups dividing the channels), linear interpolation (any output size,
//   aligned corners either way), adaptive pooling (average or max, any
//   output size), dropout (elements or channels),
// each on its own random grid of the ranks (channels split where the layer
// supports it), its input's partitions balanced or random (uneven, often
// with empty parts). Consecutive operations meet through a redistribution
// (grids, partitions, halos and storage order may all differ). No MPI:
// the same seed and rank count give the same chain on every rank.
//
//   Chain c = random_chain(/*seed=*/17, /*ranks=*/4);
//   c.describe();  // "seed 17 on 4 ranks, input 2x3x9x7:\n  conv ..."
#ifndef DISTCONV_TESTS_RANDOM_CHAIN_H_
#define DISTCONV_TESTS_RANDOM_CHAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "distconv/activation_desc.h"
#include "distconv/adaptive_pool_desc.h"
#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/distribution.h"
#include "distconv/interpolate_desc.h"
#include "distconv/pool_desc.h"

namespace distconv::testing {

enum class ChainOpKind {
  kConvolution,
  kDeconvolution,
  kPooling,
  kBatchNorm,
  kActivation,
  kConcat,  // the input next to itself along channels
  kGroupNorm,
  kInterpolate,
  kAdaptivePool,
  kDropout,
};

struct ChainOp {
  ChainOpKind kind = ChainOpKind::kActivation;
  ConvDesc conv;              // kConvolution
  DeconvDesc deconv;          // kDeconvolution
  PoolDesc pool;              // kPooling
  ActivationDesc activation;  // kActivation
  Index groups = 1;           // kGroupNorm
  InterpolateDesc interpolate;  // kInterpolate
  AdaptivePoolDesc adaptive;    // kAdaptivePool
  double dropout = 0.5;         // kDropout: the probability
  bool dropout_channels = false;  // kDropout: whole channels
  // The input, split over this operation's grid.
  std::vector<BlockPartition> src;

  Distribution src_distribution() const { return Distribution(src); }
  Shape dst_shape() const;
  // "conv 3->4 k3x1 s2x1 d1x1 pad 1,0/0,0 g1 bias; grid 1x1x2x1, parts
  // N 2 C 3 H 5|4 W 7".
  std::string describe() const;
};

struct Chain {
  std::uint64_t seed = 0;
  int ranks = 1;
  std::vector<ChainOp> ops;

  Shape input_shape() const;
  Shape output_shape() const;
  std::string describe() const;  // one line per operation
};

// The chain of `seed` on `ranks` ranks (>= 1).
Chain random_chain(std::uint64_t seed, int ranks);

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_RANDOM_CHAIN_H_
