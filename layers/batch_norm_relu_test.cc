// Batch normalisation with a fused ReLU (BatchNormOptions::activation)
// against the batch normalisation followed by the Activation layer's
// ReLU, on every grid the rank count factors into (channel splits, uneven
// and empty shards included), 2D and 3D, for each statistics scope, in
// training and inference: the same outputs, input gradients and parameter
// gradients bit for bit (the same loops and reductions, the ReLU's gate
// recomputed from the input exactly as forward computed it).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "tests/layer_testing.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::grids_with_channel_split;
using testing::grids_without_channel_split;
using testing::world_size;

template <typename T>
void fill(DistTensor<T>& t, unsigned seed, double offset) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  T* p = t.data();
  for (Index i = 0; i < t.interior().size(); ++i) {
    p[i] = static_cast<T>(u(rng) + offset);
  }
}

template <typename T>
bool same_bits(const DistTensor<T>& a, const DistTensor<T>& b) {
  if (a.interior().size() == 0) return true;  // memcmp takes no null pointers
  return std::memcmp(a.data(), b.data(),
                     sizeof(T) * static_cast<size_t>(a.interior().size())) == 0;
}

template <typename T>
void ExpectFusedIsUnfused(const ProcessGrid& grid, const Shape& shape,
                          BatchNormStats stats) {
  const Distribution dist(shape, grid.shape());
  BatchNormOptions plain;
  plain.stats = stats;
  BatchNormOptions fused = plain;
  fused.activation = NormActivation::kRelu;
  BatchNorm<T> bn(grid, dist, plain), bn_relu(grid, dist, fused);
  Activation<T> relu(grid, ActivationDesc::relu(), dist);
  EXPECT_NE(bn_relu.describe().find("then ReLU"), std::string::npos);
  const HaloLayout& l = bn.src_layout();
  DistTensor<T> x(grid, l), dy(grid, l), z(grid, l), y(grid, l), yf(grid, l);
  DistTensor<T> dz(grid, l), dx(grid, l), dxf(grid, l);
  const unsigned seed = 100 + 7 * unsigned(grid.rank());
  fill(x, seed, 1.0);
  fill(dy, seed + 1, 0.0);
  const Index c = shape[1];
  std::vector<Compute<T>> scale(c), shift(c), ds(c), db(c), dsf(c), dbf(c);
  for (Index i = 0; i < c; ++i) {  // both signs: the gate opens and closes
    scale[i] = Compute<T>(i % 2 == 0 ? 0.75 : -1.25);
    shift[i] = Compute<T>(0.25 * double(i % 3) - 0.25);
  }
  for (BatchNormMode mode :
       {BatchNormMode::kTraining, BatchNormMode::kInference}) {
    SCOPED_TRACE(to_string(mode));
    bn.set_mode(mode);
    bn_relu.set_mode(mode);
    bn.forward(x, scale.data(), shift.data(), z);
    relu.forward(z, y);
    bn_relu.forward(x, scale.data(), shift.data(), yf);
    EXPECT_TRUE(same_bits(y, yf)) << "forward on rank " << grid.rank();
    relu.backward(z, dy, dz);
    bn.backward(x, dz, scale.data(), dx, ds.data(), db.data());
    bn_relu.backward(x, dy, scale.data(), dxf, dsf.data(), dbf.data());
    EXPECT_TRUE(same_bits(dx, dxf)) << "backward on rank " << grid.rank();
    EXPECT_EQ(ds, dsf);
    EXPECT_EQ(db, dbf);
    EXPECT_EQ(bn.running_mean(), bn_relu.running_mean());
  }
}

template <typename T>
void ForEveryGrid() {
  const int p = world_size();
  for (int ndims : {4, 5}) {
    std::vector<Shape> grids = grids_without_channel_split(ndims);
    for (const Shape& g : grids_with_channel_split(ndims)) grids.push_back(g);
    const std::vector<Shape> shapes =
        ndims == 4 ? std::vector<Shape>{{3, 4, 7, 6},
                                        {1, 3, 2, 3},  // empty shards
                                        {2, 19, 5, 3}}
                   : std::vector<Shape>{{2, 3, 4, 5, 3}};
    for (const Shape& g : grids) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      for (const Shape& shape : shapes) {
        for (BatchNormStats stats :
             {BatchNormStats::kGlobal, BatchNormStats::kShard}) {
          SCOPED_TRACE(::testing::Message()
                       << p << " ranks, grid " << g << ", shape " << shape
                       << ", " << to_string(stats) << " statistics");
          ExpectFusedIsUnfused<T>(grid, shape, stats);
        }
      }
    }
  }
}

TEST(BatchNormRelu, FloatIsBatchNormThenReluBitForBit) {
  ForEveryGrid<float>();
}
TEST(BatchNormRelu, DoubleIsBatchNormThenReluBitForBit) {
  ForEveryGrid<double>();
}
TEST(BatchNormRelu, Bf16IsBatchNormThenReluBitForBit) { ForEveryGrid<bf16>(); }

// Ranks asking for different activations get the same error, no hang.
TEST(BatchNormRelu, RanksDisagreeingOnTheActivationFailTogether) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  BatchNormOptions o;
  if (grid.rank() == 1) o.activation = NormActivation::kRelu;
  try {
    BatchNorm<float> bn(grid, Distribution(Shape{2, 3, 8, 4}, grid.shape()), o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kGridMismatch) << e.what();
  }
}

}  // namespace
}  // namespace distconv
