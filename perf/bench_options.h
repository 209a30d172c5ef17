// Command line of perf/distconv_bench (see `distconv_bench --help`).
//
//   BenchOptions o = parse_bench_options({"--grid=1x1x2x1", "--mode=perf",
//                                         "mb1ic16ih64oc16oh64kh3ph1"});
//   o.problems.size();    // 1
#ifndef DISTCONV_PERF_BENCH_OPTIONS_H_
#define DISTCONV_PERF_BENCH_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "distconv/shape.h"
#include "halo/halo_options.h"
#include "kernels/pool_impl.h"
#include "layers/convolution.h"
#include "perf/conv_problem.h"

namespace distconv {

enum class BenchDir { kForward, kBackwardData, kBackwardWeights, kAll };
enum class BenchMode { kCorrectness, kPerf };
// --dt: the tensors' element type. bf16 (--conv) keeps fp32 weights and
// gradients; f16 runs linear interpolation (--interp) and the oneDNN
// convolution baseline (where oneDNN has f16 kernels for this CPU).
enum class BenchDataType { kF32, kF64, kBf16, kF16 };
// What runs the problem: the distributed layer, or the bare primitives of
// oneDNN (--device=cpu) or cuDNN (--device=gpu) on the whole problem in
// one process (the baselines; one rank only).
enum class BenchImpl { kDistconv, kOnednn, kCudnn };
// --device: the layers in host memory (oneDNN and loops) or in GPU memory
// (cuDNN and CUDA kernels; GPU builds only).
enum class BenchDevice { kCpu, kGpu };
// What correctness mode compares with: the reference loops, or the same
// layer on one process (rank 0 alone), which is fast on large images.
enum class BenchCheck { kReference, kSerial };

// --eltwise's layers (its --alg): ReLU, leaky ReLU (slope 0.1), the sum of
// two tensors, two tensors of ic channels side by side along channels,
// nearest-neighbour upsampling by 2 in every spatial dimension.
enum class EltwiseAlg { kRelu, kLeakyRelu, kAdd, kConcat, kUpsample };

// --dump-format: one .npy file per tensor, or datasets of one HDF5 file.
enum class DumpFormat { kNpy, kHdf5 };

struct BenchOptions {
  // --conv, --deconv, --pool, --bnorm or --eltwise; given before the
  // problems, as in benchdnn.
  ProblemKind driver = ProblemKind::kConvolution;
  PoolKind alg = PoolKind::kMax;                // --pool's --alg
  EltwiseAlg eltwise_alg = EltwiseAlg::kRelu;  // --eltwise's --alg
  std::vector<ConvProblem> problems;
  Shape grid;  // empty: all ranks along H (the first spatial dimension)
  BenchDir dir = BenchDir::kAll;
  BenchDataType dt = BenchDataType::kF32;
  BenchMode mode = BenchMode::kCorrectness;
  ConvOverlap overlap = ConvOverlap::kInteriorFirst;
  // --input: --conv, --deconv and --pool in host memory read their haloed
  // side from buffers with halos, or in place with frames.
  ConvInput input = ConvInput::kHaloBuffer;
  // --kernel-choice (cpu.search) of --conv, --deconv and --pool in host
  // memory; cpu.cache is the one --kernel-cache names, loaded when the run
  // starts (pooling's choices too).
  CpuConvOptions cpu;
  std::string kernel_cache;  // --kernel-cache=FILE
  // --pool-impl: --pool's local kernels in host memory (unset: the
  // heuristic's, kernels/pool_impl.h).
  std::optional<PoolImpl> pool_impl;
  // --padding-mode: what the padding of --conv, --deconv and --pool holds,
  // in every spatial dimension (set in each problem's desc as well).
  PaddingMode padding_mode = PaddingMode::kZeros;
  // --conv on grids splitting channels: the channel/filter scheme.
  ChannelParallelism channels = ChannelParallelism::kStationaryOutput;
  int channel_blocks = 0;  // --channel-blocks (0: the squarest split)
  // --transport: the halo transport of the layers of --device (the host
  // layers a GPU run is checked against keep their default).
  HaloTransport transport = HaloTransport::kDefault;
  BenchImpl impl = BenchImpl::kDistconv;
  BenchDevice device = BenchDevice::kCpu;
  // --device=gpu --conv/--deconv: cuDNN's fp32 arithmetic (--math=tf32
  // lets tensor cores round inputs to TF32).
  GpuMath gpu_math = GpuMath::kStrict;
  BenchCheck check = BenchCheck::kReference;
  bool json = false;
  bool verbose = false;  // rank 0 prints how its piece is computed
  std::string dump_dir;  // correctness mode: every tensor, in a file
  DumpFormat dump_format = DumpFormat::kNpy;
  int warmup = 2;
  int reps = 10;
  bool help = false;
};

// Whether --dir=`selected` runs `pass` (kForward, kBackwardData or
// kBackwardWeights).
inline bool runs_pass(BenchDir selected, BenchDir pass) {
  return selected == pass || selected == BenchDir::kAll;
}

// Throws distconv::Error (kInvalidArgument) naming the bad argument.
BenchOptions parse_bench_options(const std::vector<std::string>& args);

const char* bench_usage();
std::string to_string(BenchDir dir);
std::string to_string(BenchMode mode);
std::string to_string(BenchDataType dt);  // "f32", "f64", "bf16", "f16"
std::string to_string(ProblemKind driver);  // "conv", "deconv", "pool", ...
std::string to_string(EltwiseAlg alg);      // "relu", "add", ...
std::string to_string(BenchImpl impl);      // "distconv", "onednn", "cudnn"
std::string to_string(BenchDevice device);  // "cpu", "gpu"

}  // namespace distconv

#endif  // DISTCONV_PERF_BENCH_OPTIONS_H_
