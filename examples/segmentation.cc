// Trains a 2D segmentation network in the style of LBANN's mesh-tangling
// model on a synthetic image, every tensor split over a sample x spatial
// grid (see examples/segmentation.md):
//
//   x (N, C, S, S) -> [conv3x3-BN-ReLU] x2 (W) --------------- skip ----+
//                  -> max pool 2x2 -> [conv3x3-BN-ReLU] x2 (2W)         |
//                  -> transposed conv 2x2 stride 2 (W) -> concat <------+
//                  -> conv3x3-BN-ReLU (W) -> conv1x1 (K classes)
//                  -> per-pixel cross-entropy against labels
//
// The input's channels are plane waves (their frequencies and phases vary
// with the channel and the sample); each pixel's label is the class of the
// channels' mean at that pixel (below -t, between, above t), so the labels
// follow from the input and the loss can fall. Every rank writes its own
// shard of input and labels from global indices; batch norm uses global
// statistics, so the loss curve is the same on every grid (to rounding).
//
//   mpirun -np 4 segmentation [--grid=1x1x4x1 | --grid=auto [--machine=FILE]]
//       [--size=256] [--height=H]
//       [--channels=18]
//       [--samples=2] [--width=16] [--classes=3] [--steps=10] [--lr=0.05]
//       [--momentum=0.9] [--losses=FILE] [--timeout_s=S]
//       [--data=FILE.h5] [--checkpoint-dir=DIR --checkpoint-every=K]
//       [--resume] [--write-data=FILE.h5 --data-samples=M]
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "distconv/error.h"
#include "examples/gpu_training.h"
#include "examples/networks.h"
#include "examples/segmentation_net.h"
#include "examples/training.h"
#include "examples/unit_grids.h"
#include "io/h5_file.h"

namespace distconv {
namespace examples {
namespace {

struct SegmentationOptions {
  SegmentationShape shape;
  TrainOptions train;
};

SegmentationOptions parse(int argc, char** argv) {
  SegmentationOptions o;
  o.train.lr = 0.05;
  parse_args(argc, argv, &o.train, o.shape.options());
  o.shape.padding_mode = o.train.padding_mode;
  o.shape.kernels = kernel_options(o.train);
  o.shape.bn_relu = o.train.bn_relu;
  o.shape.check();
  return o;
}

// The network in host memory in either precision (train_in_precision).
template <typename T>
using Network = SegmentationNet<T>;

// --write-data: the synthetic input and labels of `samples` samples (the
// first --samples of them are the batch trained on without --data), as
// datasets "x" (float32, N x C x H x W) and "labels" (int64, N x 1 x H x
// W), in chunks of one sample, written from shards split along H.
void write_data(const std::string& path, Index samples,
                const SegmentationShape& o) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, size, 1});
  const Shape x_shape{samples, o.channels, o.height, o.size};
  const Shape y_shape{samples, 1, o.height, o.size};
  DistTensor<float> x(grid, HaloLayout(Distribution(x_shape, grid.shape())));
  DistTensor<std::int64_t> y(grid,
                             HaloLayout(Distribution(y_shape, grid.shape())));
  fill_global(x, [&](const Shape& i) {
    return segmentation_input(i, o.height, o.size);
  });
  fill_global(y, [&](const Shape& i) { return segmentation_label(i, o); });
  io::H5File file(MPI_COMM_WORLD, path, io::H5Mode::kCreate);
  file.write("x", x, io::H5DatasetOptions{Shape{1, o.channels, o.height, o.size}});
  file.write("labels", y, io::H5DatasetOptions{Shape{1, 1, o.height, o.size}});
  file.close();
  if (grid.rank() == 0) {
    std::printf("segmentation: wrote %lld samples to %s\n",
                static_cast<long long>(samples), path.c_str());
  }
}

int run(int argc, char** argv) {
  const SegmentationOptions opt = parse(argc, argv);
  const SegmentationShape& o = opt.shape;
  if (!opt.train.write_data_path.empty()) {
    write_data(opt.train.write_data_path,
               opt.train.data_samples ? opt.train.data_samples : o.samples, o);
    return 0;
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const UnitGrids grids(MPI_COMM_WORLD, segmentation_network(o), opt.train,
                        Shape{1, 1, size, 1});
  if (grids[0].rank() == 0) {
    std::printf(
        "segmentation: %lld x %lld x %lld x %lld input, width %lld, %lld "
        "classes, %s, grids (NxCxHxW) %s, %d steps of SGD (lr %g, momentum "
        "%g)\n",
        static_cast<long long>(o.samples), static_cast<long long>(o.channels),
        static_cast<long long>(o.height), static_cast<long long>(o.size),
        static_cast<long long>(o.width), static_cast<long long>(o.classes),
        describe(opt.train).c_str(), grids.describe().c_str(),
        opt.train.steps, opt.train.lr, opt.train.momentum);
  }
  if (opt.train.device == Device::kGpu) {
    train_segmentation_on_gpu(opt.train, o, grids);
    return 0;
  }
  train_in_precision<Network>(
      opt.train, o.samples,
      [](auto& net) -> const ProcessGrid& { return net.loss_grid(); }, grids,
      o);
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace distconv

int main(int argc, char** argv) {
  return distconv::examples::run_main(argc, argv, distconv::examples::run);
}
