// The layers without weights in bf16 and in fp16 against the same layers
// in fp32 on the same inputs (exact in both 16-bit types), on every grid
// the rank count factors into (uneven and empty shards, 2D and 3D; channel
// splits where the layer takes them): each 16-bit result within one
// rounding of the fp32 result (they compute in fp32 or double and round
// once), losses as in fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "distconv/scatter_gather.h"
#include "layers/activation.h"
#include "layers/add.h"
#include "layers/batch_norm.h"
#include "layers/concat.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "layers/softmax.h"
#include "layers/upsample.h"
#include "tests/conv_check.h"
#include "tests/gtest_types.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_with_channel_split;
using testing::grids_without_channel_split;

template <typename N>
class NarrowLayers : public ::testing::Test {};
using NarrowTypes = GtestTypes<NarrowTypeList>;
TYPED_TEST_SUITE(NarrowLayers, NarrowTypes);

// Uneven everywhere; 7 rows leave empty shards on 8 ranks.
const Shape kShapes[] = {Shape{2, 5, 7, 6}, Shape{1, 3, 5, 3, 4}};

// f rounded to fp16, then to bf16: exact in both (8 significant bits at
// most, within fp16's range), and so in fp32 and double.
float exact(float f) { return bf16(fp16(f)); }

std::vector<float> exact_values(Index n, unsigned seed, float lo = -2,
                                float hi = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = exact(u(rng));
  return v;
}

template <typename T>
std::vector<T> as(const std::vector<float>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// A tensor of `layout` holding `values` (global, read on rank 0).
template <typename T>
DistTensor<T> tensor(const ProcessGrid& grid, const HaloLayout& layout,
                     const std::vector<float>& values) {
  DistTensor<T> t(grid, layout);
  const std::vector<T> v = as<T>(values);
  scatter(v.data(), t, 0);
  return t;
}

template <typename T>
std::vector<double> global(const DistTensor<T>& t) {
  const std::vector<T> g = gathered(t);
  return std::vector<double>(g.begin(), g.end());
}

// Each layer's outputs (gathered on rank 0) in T, from the same inputs.
using Outputs = std::vector<std::vector<double>>;

// On rank 0: each output of N within one rounding of the fp32 one, or
// within `absolute` (gradients summed from rounded parts).
template <typename N>
void ExpectWithinOneRounding(const Outputs& got, const Outputs& want,
                             double absolute) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].size(), want[k].size());
    for (size_t i = 0; i < got[k].size(); ++i) {
      const double tol = kRounding<N> * std::abs(want[k][i]) + absolute;
      ASSERT_LE(std::abs(got[k][i] - want[k][i]), tol)
          << "output " << k << " at " << i << ": " << got[k][i] << " vs "
          << want[k][i];
    }
  }
}

// Runs layer<T>(grid, shape) for N and float on every grid, compares.
// Allowed on top of one rounding's relative error: `ulps` units in the
// last place of N at 1 (sums of rounded parts), and 1e-6 (fp16's
// subnormals).
template <typename N, typename Layer>
void OnEveryGrid(bool channel_splits, Layer layer, double ulps = 0) {
  const double absolute = std::max(1e-6, ulps * 2 * kRounding<N>);
  for (const Shape& shape : kShapes) {
    std::vector<Shape> grids = grids_without_channel_split(shape.ndims());
    if (channel_splits) {
      for (const Shape& g : grids_with_channel_split(shape.ndims())) {
        grids.push_back(g);
      }
    }
    for (const Shape& g : grids) {
      SCOPED_TRACE("shape " + shape.to_string() + " on grid " +
                   g.to_string());
      ProcessGrid grid(MPI_COMM_WORLD, g);
      const Outputs got = layer(N{}, grid, shape);
      const Outputs want = layer(float{}, grid, shape);
      if (grid.rank() == 0) ExpectWithinOneRounding<N>(got, want, absolute);
      if (testing::max_over(MPI_COMM_WORLD, ::testing::Test::HasFailure())) {
        return;
      }
    }
  }
}

TYPED_TEST(NarrowLayers, Activations) {
  OnEveryGrid<TypeParam>(true, [](auto tag, const ProcessGrid& grid,
                                  const Shape& s) {
    using T = decltype(tag);
    Outputs out;
    for (const ActivationDesc& desc :
         {ActivationDesc::relu(), ActivationDesc::leaky_relu(0.1)}) {
      Activation<T> act(grid, desc, Distribution(s, grid.shape()));
      auto x = tensor<T>(grid, act.layout(), exact_values(s.volume(), 1));
      auto dy = tensor<T>(grid, act.layout(), exact_values(s.volume(), 2));
      DistTensor<T> y(grid, act.layout()), dx(grid, act.layout());
      act.forward(x, y);
      act.backward(x, dy, dx);
      out.push_back(global(y));
      out.push_back(global(dx));
    }
    return out;
  });
}

// Pooling runs on fp32 copies and rounds once; backward rounds each
// rank's part of a gradient, then the halo exchange adds the parts (with
// inputs of magnitude <= 2 and a few windows over each cell: 2 units in
// the last place at 1).
TYPED_TEST(NarrowLayers, Pooling) {
  OnEveryGrid<TypeParam>(
      true,
      [](auto tag, const ProcessGrid& grid, const Shape& s) {
        using T = decltype(tag);
        Outputs out;
        for (PoolKind kind :
             {PoolKind::kMax, PoolKind::kAverageExcludePadding}) {
          PoolDesc desc = PoolDesc::make(kind, Shape::filled(s.ndims() - 2, 3));
          desc.stride = Shape::filled(s.ndims() - 2, 2);
          desc.padding_lower = desc.padding_upper =
              Shape::filled(s.ndims() - 2, 1);
          Pooling<T> pool(grid, desc, Distribution(s, grid.shape()));
          const Shape d = desc.dst_shape(s);
          auto x =
              tensor<T>(grid, pool.src_layout(), exact_values(s.volume(), 15));
          auto dy = tensor<T>(grid, pool.diff_dst_layout(),
                              exact_values(d.volume(), 16));
          DistTensor<T> y(grid, pool.dst_layout());
          DistTensor<T> dx(grid, pool.diff_src_layout());
          pool.forward(x, y);
          pool.backward(x, dy, dx);
          out.push_back(global(y));
          out.push_back(global(dx));
        }
        return out;
      },
      /*ulps=*/2);
}

// Batch normalisation: statistics in double from the same values in both
// types, fp32 scale and shift and their gradients; outputs rounded once.
TYPED_TEST(NarrowLayers, BatchNorm) {
  OnEveryGrid<TypeParam>(true, [](auto tag, const ProcessGrid& grid,
                                  const Shape& s) {
    using T = decltype(tag);
    BatchNorm<T> bn(grid, Distribution(s, grid.shape()));
    const std::vector<float> scale = exact_values(s[1], 17, 0.5, 2);
    const std::vector<float> shift = exact_values(s[1], 18);
    auto x =
        tensor<T>(grid, bn.src_layout(), exact_values(s.volume(), 19, 3, 9));
    auto dy =
        tensor<T>(grid, bn.diff_dst_layout(), exact_values(s.volume(), 20));
    DistTensor<T> y(grid, bn.dst_layout()), dx(grid, bn.diff_src_layout());
    std::vector<float> dscale(s[1]), dshift(s[1]);
    bn.forward(x, scale.data(), shift.data(), y);
    bn.backward(x, dy, scale.data(), dx, dscale.data(), dshift.data());
    return Outputs{global(y), global(dx), {dscale.begin(), dscale.end()},
                   {dshift.begin(), dshift.end()}, bn.batch_mean(),
                   bn.batch_variance()};
  });
}

TYPED_TEST(NarrowLayers, Add) {
  OnEveryGrid<TypeParam>(
      true, [](auto tag, const ProcessGrid& grid, const Shape& s) {
        using T = decltype(tag);
        const HaloLayout layout(Distribution(s, grid.shape()));
        auto a = tensor<T>(grid, layout, exact_values(s.volume(), 3));
        auto b = tensor<T>(grid, layout, exact_values(s.volume(), 4));
        DistTensor<T> y(grid, layout), da(grid, layout), db(grid, layout);
        add(a, b, y);
        add_backward(y, da, db);
        return Outputs{global(y), global(da), global(db)};
      });
}

TYPED_TEST(NarrowLayers, ConcatAndSlice) {
  OnEveryGrid<TypeParam>(false, [](auto tag, const ProcessGrid& grid,
                                   const Shape& s) {
    using T = decltype(tag);
    Shape s2 = s;
    s2[1] = 2;
    Concat<T> cat(grid, {Distribution(s, grid.shape()),
                         Distribution(s2, grid.shape())});
    auto a = tensor<T>(grid, cat.src_layout(0), exact_values(s.volume(), 5));
    auto b = tensor<T>(grid, cat.src_layout(1), exact_values(s2.volume(), 6));
    DistTensor<T> y(grid, cat.dst_layout());
    cat.forward({&a, &b}, y);
    DistTensor<T> da(grid, cat.src_layout(0)), db(grid, cat.src_layout(1));
    cat.backward(y, {&da, &db});
    Slice<T> slice(grid, ChannelRange{1, s[1] + 1}, cat.dst_distribution());
    DistTensor<T> part(grid, slice.dst_layout()), back(grid, slice.src_layout());
    slice.forward(y, part);
    slice.backward(part, back);
    return Outputs{global(y), global(da), global(db), global(part),
                   global(back)};
  });
}

TYPED_TEST(NarrowLayers, UpsampleSumsItsGradientInFp32) {
  OnEveryGrid<TypeParam>(
      false, [](auto tag, const ProcessGrid& grid, const Shape& s) {
        using T = decltype(tag);
        UpsampleDesc desc;
        desc.factors = Shape::filled(s.ndims() - 2, 2);
        desc.factors[0] = 3;
        Upsample<T> up(grid, desc, Distribution(s, grid.shape()));
        const Shape big = desc.dst_shape(s);
        auto x = tensor<T>(grid, up.src_layout(), exact_values(s.volume(), 7));
        // Gradients of mixed magnitudes: rounding each partial sum to 16 bits
        // would lose what a sum in fp32 keeps.
        std::vector<float> g = exact_values(big.volume(), 8);
        for (size_t i = 0; i < g.size(); i += 3) g[i] = exact(g[i] * 300.0f);
        auto dy = tensor<T>(grid, up.dst_layout(), g);
        DistTensor<T> y(grid, up.dst_layout()), dx(grid, up.src_layout());
        up.forward(x, y);
        up.backward(dy, dx);
        return Outputs{global(y), global(dx)};
      });
}

TYPED_TEST(NarrowLayers, SoftmaxAndLogSoftmax) {
  OnEveryGrid<TypeParam>(false, [](auto tag, const ProcessGrid& grid,
                                   const Shape& s) {
    using T = decltype(tag);
    Outputs out;
    for (SoftmaxKind kind : {SoftmaxKind::kSoftmax, SoftmaxKind::kLogSoftmax}) {
      SoftmaxOptions options;
      options.kind = kind;
      Softmax<T> sm(grid, Distribution(s, grid.shape()), options);
      auto x = tensor<T>(grid, sm.src_layout(), exact_values(s.volume(), 9));
      auto dy =
          tensor<T>(grid, sm.diff_dst_layout(), exact_values(s.volume(), 10));
      DistTensor<T> y(grid, sm.dst_layout()), dx(grid, sm.diff_src_layout());
      sm.forward(x, y);
      // Backward from the same output values in both types (the forward
      // results differ by their rounding).
      auto y_given =
          tensor<T>(grid, sm.dst_layout(), exact_values(s.volume(), 14, 0, 1));
      sm.backward(y_given, dy, dx);
      out.push_back(global(y));
      out.push_back(global(dx));
    }
    return out;
  });
}

TYPED_TEST(NarrowLayers, LossesReduceInDouble) {
  OnEveryGrid<TypeParam>(false, [](auto tag, const ProcessGrid& grid,
                                   const Shape& s) {
    using T = decltype(tag);
    Outputs out;
    const Distribution dist(s, grid.shape());
    for (LossKind kind : {LossKind::kCrossEntropyProbabilities,
                          LossKind::kMeanSquaredError}) {
      Loss<T> loss(grid, LossDesc::make(kind), dist);
      auto x = tensor<T>(grid, loss.prediction_layout(),
                         exact_values(s.volume(), 11));
      auto t = tensor<T>(grid, loss.target_layout(),
                         exact_values(s.volume(), 12, 0, 1));
      DistTensor<T> dx(grid, loss.diff_prediction_layout());
      const double value = loss.forward(x, t);
      loss.backward(x, t, dx);
      out.push_back({value});
      out.push_back(global(dx));
    }
    Loss<T> ce(grid, LossDesc::make(LossKind::kCrossEntropyIndices), dist);
    Shape ts = s;
    ts[1] = 1;
    std::vector<std::int64_t> labels(ts.volume());
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = (i * 7) % s[1];
    DistTensor<std::int64_t> t(grid, ce.target_layout());
    scatter(labels.data(), t, 0);
    auto x =
        tensor<T>(grid, ce.prediction_layout(), exact_values(s.volume(), 13));
    DistTensor<T> dx(grid, ce.diff_prediction_layout());
    out.push_back({ce.forward(x, t)});
    ce.backward(x, t, dx);
    out.push_back(global(dx));
    return out;
  });
}

}  // namespace
}  // namespace distconv
