// The training examples' --device=gpu in a build without the GPU backend.
#include "distconv/error.h"
#include "examples/gpu_training.h"

namespace distconv {
namespace examples {

namespace {

[[noreturn]] void no_gpu_backend() {
  throw Error(ErrorKind::kUnsupported,
              "--device=gpu: this example was built without the GPU backend "
              "(build it with bazel build --config=cuda)");
}

}  // namespace

void train_segmentation_on_gpu(const TrainOptions&, const SegmentationShape&,
                               const UnitGrids&) {
  no_gpu_backend();
}

void train_cosmoflow_on_gpu(const TrainOptions&, const CosmoflowShape&,
                            const UnitGrids&) {
  no_gpu_backend();
}

}  // namespace examples
}  // namespace distconv
