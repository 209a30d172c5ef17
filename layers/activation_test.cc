// The distributed activations against the reference on the gathered global
// tensors, on every grid the rank count factors into (channel splits
// included: the layer is element-wise); in place; tensors with halos; bad
// input.
#include "layers/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/shard_testing.h"
#include "kernels/reference/activation.h"
#include "tests/conv_check.h"
#include "tests/layer_testing.h"
#include "tests/layout_cases.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::gathered;
using testing::scattered;
using testing::world_size;

const std::vector<Shape> kShapes = {
    {2, 3, 5, 7},     // 2D; empty shards on 6 and 8 ranks along H
    {1, 4, 3, 5, 2},  // 3D
};

std::vector<ActivationDesc> descs() {
  return {ActivationDesc::relu(), ActivationDesc::leaky_relu(0.1),
          ActivationDesc::leaky_relu(-0.5)};
}

// Random values with exact zeros among them (the derivative's corner).
template <typename T>
std::vector<T> values_with_zeros(Index n, unsigned seed) {
  std::vector<T> v = random_vector<T>(n, seed);
  for (Index i = 0; i < n; i += 5) v[i] = 0;
  return v;
}

template <typename T>
std::string name() {
  return sizeof(T) == 8 ? "double" : "float";
}

// Forward and both backwards, out of place and in place; every result
// gathered must equal the reference exactly (the same operations).
template <typename T>
void ExpectMatchesReference(const ProcessGrid& grid, const Shape& shape,
                            const ActivationDesc& desc) {
  SCOPED_TRACE(std::string(to_string(desc.kind)) + " slope " +
               std::to_string(desc.slope()) + " " + name<T>());
  const Index n = shape.volume();
  const auto x = values_with_zeros<T>(n, 1);
  const auto dy = random_vector<T>(n, 2);
  std::vector<T> y_ref(n), dx_ref(n);
  reference::activation_fwd(desc, n, x.data(), y_ref.data());
  reference::activation_bwd(desc, n, x.data(), dy.data(), dx_ref.data());

  const Activation<T> act(grid, desc, Distribution(shape, grid.shape()));
  const HaloLayout& layout = act.layout();
  DistTensor<T> xt = scattered(grid, layout, x);
  DistTensor<T> dyt = scattered(grid, layout, dy);
  DistTensor<T> yt(grid, layout), dxt(grid, layout);
  act.forward(xt, yt);
  act.backward(xt, dyt, dxt);
  std::vector<T> y = gathered(yt), dx = gathered(dxt);
  if (grid.rank() == 0) {
    EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward";
    EXPECT_EQ(max_relative_error(dx, dx_ref), 0) << "backward";
  }
  if (!desc.keeps_sign()) return;
  // In place: x becomes y, dy becomes dx (read from y).
  act.forward(xt, xt);
  act.backward_from_dst(xt, dyt, dyt);
  y = gathered(xt);
  dx = gathered(dyt);
  if (grid.rank() == 0) {
    EXPECT_EQ(max_relative_error(y, y_ref), 0) << "forward in place";
    EXPECT_EQ(max_relative_error(dx, dx_ref), 0)
        << "backward from dst in place";
  }
}

template <typename T>
void ForEveryGrid() {
  for (const Shape& shape : kShapes) {
    for (const Shape& g : testing::factorizations(world_size(),
                                                  shape.ndims())) {
      ProcessGrid grid(MPI_COMM_WORLD, g);
      SCOPED_TRACE(shape.to_string() + " on grid " + g.to_string());
      for (const ActivationDesc& desc : descs()) {
        ExpectMatchesReference<T>(grid, shape, desc);
      }
      if (testing::max_over(MPI_COMM_WORLD,
                            ::testing::Test::HasFailure()) != 0) {
        return;
      }
    }
  }
}

TEST(Activation, DoubleMatchesTheReferenceOnEveryGrid) {
  ForEveryGrid<double>();
}

TEST(Activation, FloatMatchesTheReferenceOnEveryGrid) {
  ForEveryGrid<float>();
}

// Tensors with halos (width 1, channels-last; width 2, channels-first):
// interiors are computed, halo cells keep their sentinel (negative, so a
// relu run over them would change it).
TEST(Activation, TensorsWithHalosKeepTheirHalos) {
  const Shape shape{2, 3, 6, 5};
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  const Distribution dist(shape, grid.shape());
  const ActivationDesc desc = ActivationDesc::leaky_relu(0.25);
  const Activation<double> act(grid, desc, dist);
  const Index n = shape.volume();
  const auto x = values_with_zeros<double>(n, 3);
  const auto dy = random_vector<double>(n, 4);
  std::vector<double> y_ref(n), dx_ref(n);
  reference::activation_fwd(desc, n, x.data(), y_ref.data());
  reference::activation_bwd(desc, n, x.data(), dy.data(), dx_ref.data());

  const HaloLayout one = testing::with_halos(dist, 1);
  const HaloLayout two =
      testing::with_halos(dist, 2, StorageOrder::kChannelsFirst);
  const double sentinel = -7;
  DistTensor<double> xt(grid, one), yt(grid, two), dyt(grid, one),
      dxt(grid, two);
  for (DistTensor<double>* t : {&xt, &yt, &dyt, &dxt}) {
    testing::fill_buffer(*t, sentinel);
  }
  scatter(x.data(), xt, 0);
  scatter(dy.data(), dyt, 0);
  act.forward(xt, yt);
  act.backward(xt, dyt, dxt);
  const std::vector<double> y = gathered(yt), dx = gathered(dxt);
  act.forward(xt, xt);  // in place, with halos
  const std::vector<double> y_in_place = gathered(xt);
  if (grid.rank() == 0) {
    EXPECT_EQ(max_relative_error(y, y_ref), 0);
    EXPECT_EQ(max_relative_error(dx, dx_ref), 0);
    EXPECT_EQ(max_relative_error(y_in_place, y_ref), 0);
  }
  bool kept = true;
  for (DistTensor<double>* t : {&xt, &yt, &dyt, &dxt}) {
    kept = kept && testing::halos_hold(*t, sentinel);
  }
  EXPECT_TRUE(kept);
}

TEST(Activation, NanPassesThroughTheForward) {
  ProcessGrid grid(MPI_COMM_WORLD, testing::spatial_grid(4));
  for (const ActivationDesc& desc : descs()) {
    const Activation<float> act(
        grid, desc, Distribution(Shape{1, 2, 4, 3}, grid.shape()));
    DistTensor<float> x(grid, act.layout());
    testing::fill_buffer(x, std::nanf(""));
    act.forward(x, x);
    x.interior().for_each(
        [&](const Shape& i, float& v) { EXPECT_TRUE(std::isnan(v)) << i; });
  }
}

TEST(Activation, BadInputFailsOnEveryRank) {
  const int n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  ProcessGrid grid(comm, Shape{1, 1, n, 1});
  const Distribution dist(Shape{1, 4, 2 * n, 3}, grid.shape());
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kInvalidArgument, "not finite", [&] {
        Activation<float>(grid, ActivationDesc::leaky_relu(INFINITY), dist);
      });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kGridMismatch, "process grid", [&] {
        Activation<float>(grid, ActivationDesc::relu(),
                          Distribution(Shape{1, 4, 8, 8}, Shape{1, n + 1, 1, 1}));
      });
  ProcessGrid flat(comm, Shape{1, n});
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "spatial", [&] {
        Activation<float>(flat, ActivationDesc::relu(),
                          Distribution(Shape{1, 4 * n}, flat.shape()));
      });
  const Activation<float> relu(grid, ActivationDesc::relu(), dist);
  DistTensor<float> x(grid, relu.layout()), y(grid, relu.layout());
  // Another extent: the same grid, other shards.
  DistTensor<float> wrong(
      grid, HaloLayout(Distribution(Shape{1, 4, 2 * n + 1, 3}, grid.shape())));
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "relu: dst's distribution",
      [&] { relu.forward(x, wrong); });
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kShapeMismatch, "relu: diff_src's distribution",
      [&] { relu.backward(x, y, wrong); });
  const Activation<float> flip(grid, ActivationDesc::leaky_relu(-1), dist);
  testing::expect_error_on_all_ranks(
      comm, ErrorKind::kUnsupported, "pass the input to backward()",
      [&] { flip.backward_from_dst(y, y, x); });
  flip.backward(x, y, x);  // from the input: fine
}

}  // namespace
}  // namespace distconv
