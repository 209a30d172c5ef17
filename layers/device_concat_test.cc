// Concat and Slice on GPU memory against the host layers on the same data:
// three inputs (one without channels), tensors of different halo widths and
// storage orders, grids splitting samples and space (uneven and empty
// shards), 2D and 3D; slicing forward and backward with the other
// channels zeroed or kept; on a stream of the caller's own; equal bit for
// bit (copies), halo cells untouched. Skips, visibly, on a machine without
// a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "distconv/device_space.h"
#include "distconv/dist_tensor.h"
#include "layers/concat.h"
#include "layers/device_layer_testing.h"
#include "tests/mpi_testing.h"
#include "tests/shard_testing.h"

namespace distconv {
namespace {

using testing::expect_same_buffer;
using testing::to_device;
using testing::with_halos;
using testing::world_rank;

class DeviceConcat : public testing::DeviceLayerTest {};

Shape with_c(Shape s, Index c) {
  s[1] = c;
  return s;
}

template <typename T>
struct Tensors {
  std::unique_ptr<DistTensor<T>> host;
  std::unique_ptr<DistTensor<T, DeviceSpace>> dev;
};

template <typename T>
Tensors<T> random_tensors(const ProcessGrid& grid, const HaloLayout& layout,
                          std::mt19937_64& rng) {
  std::uniform_real_distribution<double> val(-2, 2);
  Tensors<T> t;
  t.host = std::make_unique<DistTensor<T>>(grid, layout);
  t.host->buffer().for_each([&](const Shape&, T& v) { v = T(val(rng)); });
  t.dev =
      std::make_unique<DistTensor<T, DeviceSpace>>(to_device(grid, *t.host));
  return t;
}

template <typename T>
void Check(const Shape& shape, const std::vector<Index>& channels,
           const Shape& g) {
  SCOPED_TRACE(::testing::Message() << "shape " << shape << ", grid " << g);
  ProcessGrid grid(MPI_COMM_WORLD, g);
  const testing::DeviceStream stream;
  const Exec<DeviceSpace> exec(stream.get());
  std::vector<Distribution> dists;
  for (Index c : channels) dists.emplace_back(with_c(shape, c), g);
  const Concat<T> host(grid, dists);
  const Concat<T, DeviceSpace> dev(grid, dists, exec);
  std::mt19937_64 rng(3 + world_rank());
  std::vector<Tensors<T>> x, dx;
  std::vector<const DistTensor<T>*> xh;
  std::vector<const DistTensor<T, DeviceSpace>*> xd;
  std::vector<DistTensor<T>*> dxh;
  std::vector<DistTensor<T, DeviceSpace>*> dxd;
  for (size_t i = 0; i < dists.size(); ++i) {
    x.push_back(random_tensors<T>(
        grid, with_halos(dists[i], i % 2, StorageOrder::kChannelsLast), rng));
    dx.push_back(random_tensors<T>(
        grid, with_halos(dists[i], 1, StorageOrder::kChannelsFirst), rng));
    xh.push_back(x.back().host.get());
    xd.push_back(x.back().dev.get());
    dxh.push_back(dx.back().host.get());
    dxd.push_back(dx.back().dev.get());
  }
  const Distribution& out = host.dst_distribution();
  Tensors<T> y = random_tensors<T>(
      grid, with_halos(out, 2, StorageOrder::kChannelsFirst), rng);
  Tensors<T> dy = random_tensors<T>(grid, HaloLayout(out), rng);
  host.forward(xh, *y.host);
  dev.forward(xd, *y.dev);
  host.backward(*dy.host, dxh);
  dev.backward(*dy.dev, dxd);
  // Slices of the output: the middle input's channels, then all of them.
  const ChannelRange middle = host.channels(1);
  for (const ChannelRange& r :
       {middle, ChannelRange{0, out.global_shape()[1]}}) {
    const Slice<T> hs(grid, r, out);
    const Slice<T, DeviceSpace> ds(grid, r, out, exec);
    Tensors<T> piece = random_tensors<T>(
        grid, with_halos(hs.dst_distribution(), 1, StorageOrder::kChannelsLast),
        rng);
    Tensors<T> zeroed = random_tensors<T>(grid, HaloLayout(out), rng);
    Tensors<T> kept = random_tensors<T>(
        grid, with_halos(out, 1, StorageOrder::kChannelsFirst), rng);
    hs.forward(*y.host, *piece.host);
    ds.forward(*y.dev, *piece.dev);
    hs.backward(*piece.host, *zeroed.host, OtherChannels::kZero);
    ds.backward(*piece.dev, *zeroed.dev, OtherChannels::kZero);
    hs.backward(*piece.host, *kept.host, OtherChannels::kKeep);
    ds.backward(*piece.dev, *kept.dev, OtherChannels::kKeep);
    stream.synchronize();
    expect_same_buffer(*piece.host, *piece.dev, "slice forward");
    expect_same_buffer(*zeroed.host, *zeroed.dev, "slice backward, kZero");
    expect_same_buffer(*kept.host, *kept.dev, "slice backward, kKeep");
  }
  stream.synchronize();
  expect_same_buffer(*y.host, *y.dev, "concat forward");
  for (size_t i = 0; i < dx.size(); ++i) {
    expect_same_buffer(*dx[i].host, *dx[i].dev, "concat backward");
  }
}

// The grids splitting one of N and the spatial dimensions (concatenation
// keeps channels whole).
std::vector<Shape> grids(int ndims) {
  std::vector<Shape> out;
  for (const Shape& g : testing::one_split_grids(ndims)) {
    if (g[1] == 1 || g.volume() == 1) out.push_back(g);
  }
  return out;
}

template <typename T>
void CheckAll() {
  for (const Shape& g : grids(4)) {
    Check<T>(Shape{2, 0, 5, 7}, {3, 0, 4}, g);
    Check<T>(Shape{1, 0, 2, 3}, {2, 1}, g);  // empty shards on 3 ranks
  }
  for (const Shape& g : grids(5)) Check<T>(Shape{1, 0, 3, 5, 2}, {2, 3}, g);
}

TEST_F(DeviceConcat, FloatMatchesTheHostBitForBit) { CheckAll<float>(); }

TEST_F(DeviceConcat, DoubleMatchesTheHostBitForBit) { CheckAll<double>(); }

TEST_F(DeviceConcat, Bf16MatchesTheHostBitForBit) { CheckAll<bf16>(); }
TEST_F(DeviceConcat, Fp16MatchesTheHostBitForBit) { CheckAll<fp16>(); }

}  // namespace
}  // namespace distconv
