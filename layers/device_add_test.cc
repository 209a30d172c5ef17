// add and add_backward on GPU memory against the host functions on the
// same data: tensors of different halo widths and storage orders, grids
// splitting samples, channels and space (uneven and empty shards), 2D and
// 3D, in place, on a stream of the caller's own; equal bit for bit, halo
// cells untouched. Skips, visibly, on a machine without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/add.h"
#include "layers/device_layer_testing.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv {
namespace {

using testing::expect_same_buffer;
using testing::to_device;
using testing::world_rank;
using testing::world_size;

class DeviceAdd : public testing::DeviceLayerTest {};

template <typename T>
void Check(const Shape& global, const Shape& g) {
  SCOPED_TRACE(::testing::Message() << "global " << global << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const Distribution dist(global, g);
  const testing::DeviceStream stream;
  const Exec<DeviceSpace> exec(stream.get());
  const HaloLayout plain(dist);
  const HaloLayout h1 = testing::with_halos(dist, 1);
  const HaloLayout h2_first =
      testing::with_halos(dist, 2, StorageOrder::kChannelsFirst);
  std::mt19937_64 rng(7 + world_rank());
  std::uniform_real_distribution<double> val(-2, 2);
  auto fill = [&](DistTensor<T>& t) {
    t.buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  };
  DistTensor<T> a(grid, h1), b(grid, h2_first), y(grid, plain);
  DistTensor<T> da(grid, h2_first), db(grid, plain);
  for (DistTensor<T>* t : {&a, &b, &y, &da, &db}) fill(*t);
  auto ad = to_device(grid, a), bd = to_device(grid, b),
       yd = to_device(grid, y), dad = to_device(grid, da),
       dbd = to_device(grid, db);
  add(a, b, y);
  add(ad, bd, yd, exec);
  add_backward(a, da, db);  // a as the output gradient
  add_backward(ad, dad, dbd, exec);
  stream.synchronize();
  expect_same_buffer(y, yd, "add");
  expect_same_buffer(da, dad, "add backward: diff_a");
  expect_same_buffer(db, dbd, "add backward: diff_b");
  // In place: a += b; diff_a is diff_dst itself.
  add(a, b, a);
  add(ad, bd, ad, exec);
  add_backward(b, b, db);
  add_backward(bd, bd, dbd, exec);
  stream.synchronize();
  expect_same_buffer(a, ad, "add in place");
  expect_same_buffer(b, bd, "add backward in place");
  expect_same_buffer(db, dbd, "add backward beside in place");
}

template <typename T>
void CheckAll() {
  for (const Shape& g : testing::one_split_grids(4)) {
    Check<T>(Shape{2, 3, 5, 7}, g);
    Check<T>(Shape{1, 2, 2, 3}, g);  // empty shards on 3 ranks
  }
  for (const Shape& g : testing::one_split_grids(5)) {
    Check<T>(Shape{1, 4, 3, 5, 2}, g);
  }
}

TEST_F(DeviceAdd, FloatMatchesTheHostBitForBit) { CheckAll<float>(); }

TEST_F(DeviceAdd, DoubleMatchesTheHostBitForBit) { CheckAll<double>(); }

TEST_F(DeviceAdd, Bf16MatchesTheHostBitForBit) { CheckAll<bf16>(); }
TEST_F(DeviceAdd, Fp16MatchesTheHostBitForBit) { CheckAll<fp16>(); }

// A tensor of another distribution is refused before anything is queued.
TEST_F(DeviceAdd, RefusesATensorOfAnotherDistribution) {
  Shape g = Shape::filled(4, 1);
  g[2] = world_size();
  ProcessGrid grid(MPI_COMM_WORLD, g);
  DistTensor<float, DeviceSpace> a(
      grid, HaloLayout(Distribution(Shape{1, 2, 8, 4}, g)));
  DistTensor<float, DeviceSpace> other(
      grid, HaloLayout(Distribution(Shape{1, 2, 8, 5}, g)));
  try {
    add(a, a, other);
    FAIL() << "a dst of another distribution was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("add: dst"), std::string::npos);
  }
}

}  // namespace
}  // namespace distconv
