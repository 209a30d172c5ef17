// The training examples in GPU memory (see examples/gpu_training.h). Built
// only with --config=cuda.
#include "examples/gpu_training.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "examples/cosmoflow_net.h"
#include "examples/segmentation_net.h"

namespace distconv {
namespace examples {
namespace {

// Rank r on GPU r % GPUs; the same error on every rank where there is
// none (every rank of these runs sees the same machine's GPUs).
void use_rank_gpu() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  DeviceSpace::use_device_of_rank(rank);
}

template <typename T>
using SegmentationOnGpu = SegmentationNet<T, DeviceSpace>;
template <typename T>
using CosmoflowOnGpu = CosmoflowNet<T, DeviceSpace>;

}  // namespace

void train_segmentation_on_gpu(const TrainOptions& opt,
                               const SegmentationShape& shape,
                               const UnitGrids& grids) {
  use_rank_gpu();
  train_in_precision<SegmentationOnGpu>(
      opt, shape.samples,
      [](auto& net) -> const ProcessGrid& { return net.loss_grid(); }, grids,
      shape);
}

void train_cosmoflow_on_gpu(const TrainOptions& opt,
                            const CosmoflowShape& shape,
                            const UnitGrids& grids) {
  use_rank_gpu();
  train_in_precision<CosmoflowOnGpu>(
      opt, shape.samples,
      [](auto& net) -> const ProcessGrid& { return net.head_grid(); }, grids,
      shape);
}

}  // namespace examples
}  // namespace distconv
