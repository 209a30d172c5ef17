// distconv_bench --device=gpu in a build without the GPU backend.
#include "distconv/error.h"
#include "perf/gpu_bench.h"

namespace distconv {

BenchResult run_gpu_bench(const BenchOptions&, const ConvProblem&) {
  throw Error(ErrorKind::kUnsupported,
              "--device=gpu: this distconv_bench was built without the GPU "
              "backend (build it with bazel build --config=cuda)");
}

}  // namespace distconv
