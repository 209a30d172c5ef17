// The training examples in GPU memory (--device=gpu): rank r on GPU
// r % GPUs, every layer and tensor of the network in device memory, the
// parameters copied in before each step and their gradients out after it
// (SGD, checkpoints and the log as on the host). Defined in a build with
// --config=cuda (examples/gpu_training.cc); a build without it throws
// kUnsupported saying so (examples/no_gpu_training.cc), as does a machine
// without a GPU.
#ifndef DISTCONV_EXAMPLES_GPU_TRAINING_H_
#define DISTCONV_EXAMPLES_GPU_TRAINING_H_

#include "examples/networks.h"
#include "examples/training.h"
#include "examples/unit_grids.h"

namespace distconv {
namespace examples {

void train_segmentation_on_gpu(const TrainOptions& opt,
                               const SegmentationShape& shape,
                               const UnitGrids& grids);
void train_cosmoflow_on_gpu(const TrainOptions& opt,
                            const CosmoflowShape& shape,
                            const UnitGrids& grids);

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_GPU_TRAINING_H_
