// Trains a 3D regression network in the style of CosmoFlow on synthetic
// volumes, every tensor split over a sample x spatial grid (see
// examples/cosmoflow.md):
//
//   x (N, 4, S, S, S) -> L x [conv3x3x3-BN-ReLU -> max pool 2x2x2]
//                        (16, 32, 64, ... channels)
//                     -> dense (a convolution whose kernel covers the whole
//                        remaining volume) -> ReLU -> dense (1x1x1)
//                     -> 4 outputs, mean squared error against the
//                        sample's 4 parameters
//
// Each sample has 4 parameters in [-1, 1]; its volume is a sum of 3D plane
// waves, one per parameter and channel, weighted by that parameter, so the
// parameters can be read back from the volume and the loss can fall. Every
// rank writes its own shard from global indices; batch norm uses global
// statistics, so the loss curve is the same on every grid (to rounding).
//
//   mpirun -np 4 cosmoflow [--grid=1x1x4x1x1 | --grid=auto [--machine=FILE]]
//       [--size=32] [--samples=4]
//       [--stacks=3] [--width=16] [--hidden=64] [--steps=10] [--lr=0.0005]
//       [--momentum=0.5] [--losses=FILE] [--timeout_s=S]
#include <mpi.h>

#include <cstdio>
#include <string>

#include "distconv/error.h"
#include "examples/cosmoflow_net.h"
#include "examples/gpu_training.h"
#include "examples/networks.h"
#include "examples/training.h"
#include "examples/unit_grids.h"
#include "io/h5_file.h"

namespace distconv {
namespace examples {
namespace {

struct CosmoflowOptions {
  CosmoflowShape shape;
  TrainOptions train;
};

CosmoflowOptions parse(int argc, char** argv) {
  CosmoflowOptions o;
  o.train.lr = 0.0005;
  o.train.momentum = 0.5;
  parse_args(argc, argv, &o.train, o.shape.options());
  o.shape.padding_mode = o.train.padding_mode;
  o.shape.kernels = kernel_options(o.train);
  o.shape.bn_relu = o.train.bn_relu;
  o.shape.check();
  return o;
}

// The network in host memory in either precision (train_in_precision).
template <typename T>
using Network = CosmoflowNet<T>;

// --write-data: the synthetic volumes and targets of `samples` samples (the
// first --samples of them are the batch trained on without --data), as
// datasets "x" (float32, N x 4 x S x S x S) and "targets" (float32, N x 4 x
// 1 x 1 x 1), in chunks of one sample, written from shards split along D.
void write_data(const std::string& path, Index samples,
                const CosmoflowShape& o) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, size, 1, 1});
  const Index c = kCosmoflowChannels;
  const Shape x_shape{samples, c, o.size, o.size, o.size};
  const Shape t_shape{samples, kCosmoflowTargets, 1, 1, 1};
  DistTensor<float> x(grid, HaloLayout(Distribution(x_shape, grid.shape())));
  DistTensor<float> t(grid, HaloLayout(Distribution(t_shape, grid.shape())));
  fill_global(x, [&](const Shape& i) { return cosmoflow_input(i, o.size); });
  fill_global(t,
              [](const Shape& i) { return cosmoflow_target(i[0], i[1]); });
  io::H5File file(MPI_COMM_WORLD, path, io::H5Mode::kCreate);
  file.write("x", x,
             io::H5DatasetOptions{Shape{1, c, o.size, o.size, o.size}});
  file.write("targets", t);
  file.close();
  if (grid.rank() == 0) {
    std::printf("cosmoflow: wrote %lld samples to %s\n",
                static_cast<long long>(samples), path.c_str());
  }
}

int run(int argc, char** argv) {
  const CosmoflowOptions opt = parse(argc, argv);
  const CosmoflowShape& o = opt.shape;
  if (!opt.train.write_data_path.empty()) {
    write_data(opt.train.write_data_path,
               opt.train.data_samples ? opt.train.data_samples : o.samples, o);
    return 0;
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const UnitGrids grids(MPI_COMM_WORLD, cosmoflow_network(o), opt.train,
                        Shape{1, 1, size, 1, 1});
  if (grids[0].rank() == 0) {
    std::printf(
        "cosmoflow: %lld x %lld x %lld^3 volumes, %lld stacks from width "
        "%lld, dense %lld -> %lld, %s, grids (NxCxDxHxW) %s, %d steps of "
        "SGD (lr %g, momentum %g)\n",
        static_cast<long long>(o.samples),
        static_cast<long long>(kCosmoflowChannels),
        static_cast<long long>(o.size), static_cast<long long>(o.stacks),
        static_cast<long long>(o.width), static_cast<long long>(o.hidden),
        static_cast<long long>(kCosmoflowTargets),
        describe(opt.train).c_str(), grids.describe().c_str(),
        opt.train.steps, opt.train.lr, opt.train.momentum);
  }
  if (opt.train.device == Device::kGpu) {
    train_cosmoflow_on_gpu(opt.train, o, grids);
    return 0;
  }
  train_in_precision<Network>(
      opt.train, o.samples,
      [](auto& net) -> const ProcessGrid& { return net.head_grid(); }, grids,
      o);
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace distconv

int main(int argc, char** argv) {
  return distconv::examples::run_main(argc, argv, distconv::examples::run);
}
