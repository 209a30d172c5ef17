#include "perf/bench_options.h"

#include <cstdlib>

#include "distconv/error.h"

namespace distconv {
namespace {

bool take(const std::string& arg, const std::string& key, std::string* value) {
  if (arg.rfind(key + "=", 0) != 0) return false;
  *value = arg.substr(key.size() + 1);
  return true;
}

int positive_int(const std::string& key, const std::string& v, int min) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  require(!v.empty() && *end == '\0' && x >= min && x <= 1000000,
          ErrorKind::kInvalidArgument, key, "=", v, " is not an integer >= ",
          min);
  return static_cast<int>(x);
}

Shape parse_grid(const std::string& v) {
  std::vector<Index> dims;
  size_t start = 0;
  while (true) {
    const size_t x = v.find('x', start);
    const std::string part = v.substr(start, x - start);
    dims.push_back(positive_int("--grid", part, 1));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  require(dims.size() == 4 || dims.size() == 5, ErrorKind::kInvalidArgument,
          "--grid=", v, " needs NxCxHxW or NxCxDxHxW");
  Shape grid = Shape::filled(static_cast<int>(dims.size()), 1);
  for (size_t d = 0; d < dims.size(); ++d) grid[static_cast<int>(d)] = dims[d];
  return grid;
}

HaloTransport halo_transport_named(const std::string& name) {
  for (HaloTransport t :
       {HaloTransport::kSharedMemory, HaloTransport::kPackedBuffers,
        HaloTransport::kMpiDatatypes, HaloTransport::kHostStaged,
        HaloTransport::kNccl, HaloTransport::kCudaIpc}) {
    if (name == to_string(t)) return t;
  }
  throw Error(ErrorKind::kInvalidArgument,
              "--transport=" + name +
                  " is not shared_memory, packed_buffers, mpi_datatypes, "
                  "host_staged, nccl or cuda_ipc");
}

// --device and what goes with it.
void check_device(const BenchOptions& o) {
  const bool gpu = o.device == BenchDevice::kGpu;
  require(o.impl != BenchImpl::kOnednn || !gpu, ErrorKind::kInvalidArgument,
          "--impl=onednn is the CPU baseline; --device=gpu's is --impl=cudnn");
  require(o.impl != BenchImpl::kCudnn || gpu, ErrorKind::kInvalidArgument,
          "--impl=cudnn is the GPU baseline: give --device=gpu");
  require(gpu || o.gpu_math == GpuMath::kStrict, ErrorKind::kInvalidArgument,
          "--math=tf32 is for --device=gpu");
  if (!gpu) return;
  require(o.dt != BenchDataType::kF16, ErrorKind::kInvalidArgument,
          "--device=gpu runs --dt=f32, f64 or bf16, not ", to_string(o.dt));
  require(o.impl != BenchImpl::kCudnn || o.dt == BenchDataType::kF32,
          ErrorKind::kInvalidArgument, "--impl=cudnn runs --dt=f32");
  require(o.check == BenchCheck::kReference, ErrorKind::kInvalidArgument,
          "--device=gpu compares with the host layer: no --check=serial");
  require(o.dump_dir.empty(), ErrorKind::kInvalidArgument,
          "--dump-dir writes the host layers' tensors: not with --device=gpu");
}

}  // namespace

const char* bench_usage() {
  return R"(usage: mpirun -np P distconv_bench [options] PROBLEM... | --batch=FILE
Benchmarks and checks a distributed layer on problems given in oneDNN
benchdnn's descriptor syntax, e.g. mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1
(fields g mb ic oc i{d,h,w} o{d,h,w} k{d,h,w} s{d,h,w} p{d,h,w} d{d,h,w},
n"name"; dilation 0 = dense; id/kd make it 3D).

  --conv                 convolution (the default): forward with bias,
                         backward-data, backward-weights with bias
  --deconv               transposed convolution, same passes; ic/i.. are its
                         input, oc/o.. its output (benchdnn's --deconv)
  --pool                 pooling, forward and backward (fwd, bwd_d); no g,
                         oc or dilation, e.g. mb1ic16ih512kh3sh2ph1
  --alg=max|avg_np|avg_p --pool: max, average excluding / including padding
  --bnorm                batch normalisation, training forward and backward
                         (fwd, bwd_d), statistics over the whole tensor,
                         scale and shift; mb, ic, i.. only, e.g. mb8ic64ih128
  --gnorm                group normalisation, training forward and backward
                         (fwd, bwd_d), scale and shift; g (the groups), mb,
                         ic, i.. only, e.g. g8mb2ic32id16ih16iw16; no
                         oneDNN baseline (oneDNN 3.2 has none), host only
  --interp               linear interpolation (bilinear, trilinear) to twice
                         the input's size, align_corners no, forward and
                         backward (fwd, bwd_d); mb, ic, i.. only, as
                         --bnorm; no baseline, host only
  --eltwise              the layers with no communication, forward and
                         backward (fwd, bwd_d); mb, ic, i.. only, as --bnorm
  --alg=relu|leaky_relu|add|concat|nearest
                         --eltwise: ReLU, leaky ReLU (slope 0.1), the sum of
                         two tensors, two tensors of ic channels concatenated
                         along channels, nearest upsampling by 2 (default relu)
  (give the driver before its problems; every other option, --alg
  included, applies to all the problems)
  --batch=FILE           problems from FILE, one per line ('#' comments)
  --grid=NxCxHxW         process grid (or NxCxDxHxW); default: all ranks on H
  --dir=fwd|bwd_d|bwd_w|all       passes to run (default all)
  --dt=f32|f64|bf16|f16  element type (default f32; f64 runs the reference
                         kernels: oneDNN has no fp64 convolution). bf16
                         (every driver): bf16 tensors with fp32 weights
                         and gradients, checked against
                         the fp32 reference on the same bf16 inputs; with
                         --conv --impl=onednn, oneDNN's bf16 (or f16)
                         primitives where this CPU has them, else an error
                         naming the type. f16: --conv's baseline and
                         --interp (fp16 tensors, checked as bf16's within
                         2^-9)
  --mode=correctness|perf
        correctness: random inputs (fixed seed) scattered over the grid, the
        gathered results compared with the reference kernels on rank 0;
        prints the worst relative error (max-norm) and PASS/FAIL (exit 1 on
        FAIL); PASS below 1e-10 in fp64, 6e-7 * sqrt(K) (at least 1e-5) in
        fp32 with K the longest sum in any result; in bf16, y and dx below
        2^-7 (a few bf16 roundings; f16: 2^-9) and the fp32 gradients as in
        fp32.
        perf: warm-up, then timed runs with ranks aligned; median and min
        time, GFLOP/s, time blocked on communication.
  --check=reference|serial
                         correctness mode: compare with the reference loops
                         (default), or with the layer on rank 0 alone
  --overlap=on|off       compute the interior while halos travel (default on)
  --input=buffers|in_place
                         --conv, --deconv, --pool, --interp (--device=cpu):
                         the side with halos (the input; the transposed
                         convolution's output) in buffers with room for
                         them (default), or read and written in place,
                         halos in frames (as the PyTorch front end runs;
                         the convolution falls back to buffers where it
                         splits channels, interpolation takes fp32 and
                         fp64)
  --kernel-choice=heuristic|measured
                         --conv, --deconv, --pool (--device=cpu): each local
                         kernel's implementation by rules with no timing
                         (default), or timed on each rank when the layer is
                         planned, the fastest any rank found for each
                         problem run by all (--verbose shows them)
  --kernel-cache=FILE    with --kernel-choice=measured: reuse the choices
                         FILE holds (from this CPU and oneDNN; another
                         machine's, a truncated or corrupt file: a message,
                         and a fresh search), then write every rank's
                         choices back to FILE
  --pool-impl=slabs|one_call|reference
                         --pool (--device=cpu): the local kernels' first
                         choice (default: the heuristic's; one that does
                         not apply falls back down that list; --verbose
                         shows what ran)
  --padding-mode=zeros|circular
                         --conv, --deconv, --pool: padding of zeros
                         (default), or wrapped around from the other end in
                         every spatial dimension (periodic data; padding no
                         wider than the input); not with --impl=onednn
                         or cudnn
  --channels=stationary_output|stationary_input|stationary_weights
                         --conv on a grid splitting channels (C > 1 in
                         --grid): allgather the input and keep the output
                         (default), sum partial outputs (reduce-scatter)
                         and keep the input, or both over a 2D split of the
                         weights
  --channel-blocks=K     stationary_weights: K input-channel blocks (must
                         divide the grid's C; default: the squarest split)
  --transport=NAME       the halo transport of --conv, --deconv and --pool:
                         shared_memory, packed_buffers or mpi_datatypes
                         (host memory; default shared_memory), host_staged,
                         nccl or cuda_ipc (--device=gpu; default
                         host_staged)
  --device=cpu|gpu       the layers in host memory (default) or in GPU
                         memory (a build with --config=cuda; rank r uses GPU
                         r % GPUs). gpu: --dt=f32, f64 or bf16;
                         correctness mode runs the host layer on the same
                         grid and inputs and compares the gathered outputs
                         and gradients with it (the bounds above; bf16:
                         2^-7, gradients included)
  --math=strict|tf32     --device=gpu: cuDNN's fp32 convolution arithmetic
                         (tf32: tensor cores round inputs to TF32)
  --impl=distconv|onednn|cudnn
                         onednn (--device=cpu), cudnn (--device=gpu; f32):
                         the bare primitives on the whole problem in one
                         process (the baseline; -np 1, perf mode)
  --warmup=K --reps=R    perf mode: K untimed and R timed runs (2, 10)
  --json                 rank 0 prints one JSON object per problem per line
  --verbose              rank 0 prints the layer's describe(): its pieces and
                         the kernels (oneDNN implementations) that run them
  --dump-dir=DIR         correctness mode: write every tensor (--conv: x w b
                         dy y dx dw db), each from the ranks' shards
  --dump-format=npy|h5   DIR/NAME.npy per tensor (default), or datasets
                         NAME of DIR/tensors.h5 (parallel HDF5)
  --help                 this text
)";
}

std::string to_string(BenchDir dir) {
  switch (dir) {
    case BenchDir::kForward: return "fwd";
    case BenchDir::kBackwardData: return "bwd_d";
    case BenchDir::kBackwardWeights: return "bwd_w";
    case BenchDir::kAll: return "all";
  }
  return "?";
}

std::string to_string(ProblemKind driver) {
  switch (driver) {
    case ProblemKind::kConvolution: return "conv";
    case ProblemKind::kDeconvolution: return "deconv";
    case ProblemKind::kPooling: return "pool";
    case ProblemKind::kBatchNorm: return "bnorm";
    case ProblemKind::kElementwise: return "eltwise";
    case ProblemKind::kGroupNorm: return "gnorm";
    case ProblemKind::kInterpolate:
      return "interp";
  }
  return "?";
}

std::string to_string(EltwiseAlg alg) {
  switch (alg) {
    case EltwiseAlg::kRelu: return "relu";
    case EltwiseAlg::kLeakyRelu: return "leaky_relu";
    case EltwiseAlg::kAdd: return "add";
    case EltwiseAlg::kConcat: return "concat";
    case EltwiseAlg::kUpsample: return "nearest";
  }
  return "?";
}

std::string to_string(BenchDataType dt) {
  switch (dt) {
    case BenchDataType::kF32: return "f32";
    case BenchDataType::kF64: return "f64";
    case BenchDataType::kBf16: return "bf16";
    case BenchDataType::kF16: return "f16";
  }
  return "?";
}

std::string to_string(BenchImpl impl) {
  switch (impl) {
    case BenchImpl::kDistconv: return "distconv";
    case BenchImpl::kOnednn: return "onednn";
    case BenchImpl::kCudnn: return "cudnn";
  }
  return "?";
}

std::string to_string(BenchDevice device) {
  return device == BenchDevice::kGpu ? "gpu" : "cpu";
}

std::string to_string(BenchMode mode) {
  return mode == BenchMode::kPerf ? "perf" : "correctness";
}

BenchOptions parse_bench_options(const std::vector<std::string>& args) {
  BenchOptions o;
  std::string alg;  // resolved once the driver is known
  for (const std::string& arg : args) {
    std::string v;
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--conv" || arg == "--deconv" || arg == "--pool" ||
               arg == "--bnorm" || arg == "--gnorm" || arg == "--eltwise" ||
               arg == "--interp") {
      require(o.problems.empty(), ErrorKind::kInvalidArgument, arg,
              " comes after problems; give the driver first");
      o.driver = arg == "--conv"     ? ProblemKind::kConvolution
                 : arg == "--deconv" ? ProblemKind::kDeconvolution
                 : arg == "--pool"   ? ProblemKind::kPooling
                 : arg == "--bnorm"  ? ProblemKind::kBatchNorm
                 : arg == "--gnorm"  ? ProblemKind::kGroupNorm
                 : arg == "--interp" ? ProblemKind::kInterpolate
                                     : ProblemKind::kElementwise;
    } else if (take(arg, "--alg", &v)) {
      alg = v;
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg == "--verbose") {
      o.verbose = true;
    } else if (take(arg, "--batch", &v)) {
      for (ConvProblem& p : read_conv_batch(v, o.driver)) {
        o.problems.push_back(p);
      }
    } else if (take(arg, "--grid", &v)) {
      o.grid = parse_grid(v);
    } else if (take(arg, "--dir", &v)) {
      if (v == "fwd") o.dir = BenchDir::kForward;
      else if (v == "bwd_d") o.dir = BenchDir::kBackwardData;
      else if (v == "bwd_w") o.dir = BenchDir::kBackwardWeights;
      else if (v == "all") o.dir = BenchDir::kAll;
      else throw Error(ErrorKind::kInvalidArgument, "--dir=" + v + " is not fwd, bwd_d, bwd_w or all");
    } else if (take(arg, "--dt", &v)) {
      if (v == "f32") o.dt = BenchDataType::kF32;
      else if (v == "f64") o.dt = BenchDataType::kF64;
      else if (v == "bf16") o.dt = BenchDataType::kBf16;
      else if (v == "f16") o.dt = BenchDataType::kF16;
      else throw Error(ErrorKind::kInvalidArgument, "--dt=" + v + " is not f32, f64, bf16 or f16");
    } else if (take(arg, "--mode", &v)) {
      require(v == "correctness" || v == "perf", ErrorKind::kInvalidArgument,
              "--mode=", v, " is not correctness or perf");
      o.mode = v == "perf" ? BenchMode::kPerf : BenchMode::kCorrectness;
    } else if (take(arg, "--overlap", &v)) {
      require(v == "on" || v == "off", ErrorKind::kInvalidArgument,
              "--overlap=", v, " is not on or off");
      o.overlap = v == "on" ? ConvOverlap::kInteriorFirst : ConvOverlap::kNone;
    } else if (take(arg, "--input", &v)) {
      require(v == "buffers" || v == "in_place", ErrorKind::kInvalidArgument,
              "--input=", v, " is not buffers or in_place");
      o.input = v == "in_place" ? ConvInput::kInPlace : ConvInput::kHaloBuffer;
    } else if (take(arg, "--kernel-choice", &v)) {
      require(v == "heuristic" || v == "measured", ErrorKind::kInvalidArgument,
              "--kernel-choice=", v, " is not heuristic or measured");
      o.cpu.search = v == "measured" ? ConvImplSearch::kMeasured
                                     : ConvImplSearch::kHeuristic;
    } else if (take(arg, "--kernel-cache", &v)) {
      require(!v.empty(), ErrorKind::kInvalidArgument,
              "--kernel-cache= names no file");
      o.kernel_cache = v;
    } else if (take(arg, "--pool-impl", &v)) {
      o.pool_impl = pool_impl_named(v, "--pool-impl");
    } else if (take(arg, "--padding-mode", &v)) {
      require(v == "zeros" || v == "circular", ErrorKind::kInvalidArgument,
              "--padding-mode=", v, " is not zeros or circular");
      o.padding_mode =
          v == "circular" ? PaddingMode::kCircular : PaddingMode::kZeros;
    } else if (take(arg, "--channels", &v)) {
      o.channels = channel_parallelism_named(v, "--channels");
    } else if (take(arg, "--channel-blocks", &v)) {
      o.channel_blocks = positive_int("--channel-blocks", v, 1);
    } else if (take(arg, "--transport", &v)) {
      o.transport = halo_transport_named(v);
    } else if (take(arg, "--impl", &v)) {
      require(v == "distconv" || v == "onednn" || v == "cudnn",
              ErrorKind::kInvalidArgument, "--impl=", v,
              " is not distconv, onednn or cudnn");
      o.impl = v == "onednn"  ? BenchImpl::kOnednn
               : v == "cudnn" ? BenchImpl::kCudnn
                              : BenchImpl::kDistconv;
    } else if (take(arg, "--device", &v)) {
      require(v == "cpu" || v == "gpu", ErrorKind::kInvalidArgument,
              "--device=", v, " is not cpu or gpu");
      o.device = v == "gpu" ? BenchDevice::kGpu : BenchDevice::kCpu;
    } else if (take(arg, "--math", &v)) {
      require(v == "strict" || v == "tf32", ErrorKind::kInvalidArgument,
              "--math=", v, " is not strict or tf32");
      o.gpu_math = v == "tf32" ? GpuMath::kTf32 : GpuMath::kStrict;
    } else if (take(arg, "--check", &v)) {
      require(v == "reference" || v == "serial", ErrorKind::kInvalidArgument,
              "--check=", v, " is not reference or serial");
      o.check = v == "serial" ? BenchCheck::kSerial : BenchCheck::kReference;
    } else if (take(arg, "--dump-dir", &v)) {
      require(!v.empty(), ErrorKind::kInvalidArgument, "--dump-dir is empty");
      o.dump_dir = v;
    } else if (take(arg, "--dump-format", &v)) {
      require(v == "npy" || v == "h5", ErrorKind::kInvalidArgument,
              "--dump-format=", v, " is not npy or h5");
      o.dump_format = v == "h5" ? DumpFormat::kHdf5 : DumpFormat::kNpy;
    } else if (take(arg, "--warmup", &v)) {
      o.warmup = positive_int("--warmup", v, 0);
    } else if (take(arg, "--reps", &v)) {
      o.reps = positive_int("--reps", v, 1);
    } else if (arg.rfind("--", 0) == 0) {
      throw Error(ErrorKind::kInvalidArgument,
                  "unknown option " + arg + " (see --help)");
    } else {
      o.problems.push_back(parse_conv_problem(arg, o.driver));
    }
  }
  if (!alg.empty()) {
    if (o.driver == ProblemKind::kPooling) {
      if (alg == "max") o.alg = PoolKind::kMax;
      else if (alg == "avg_np") o.alg = PoolKind::kAverageExcludePadding;
      else if (alg == "avg_p") o.alg = PoolKind::kAverageIncludePadding;
      else throw Error(ErrorKind::kInvalidArgument, "--alg=" + alg + " is not max, avg_np or avg_p");
    } else if (o.driver == ProblemKind::kElementwise) {
      if (alg == "relu") o.eltwise_alg = EltwiseAlg::kRelu;
      else if (alg == "leaky_relu") o.eltwise_alg = EltwiseAlg::kLeakyRelu;
      else if (alg == "add") o.eltwise_alg = EltwiseAlg::kAdd;
      else if (alg == "concat") o.eltwise_alg = EltwiseAlg::kConcat;
      else if (alg == "nearest") o.eltwise_alg = EltwiseAlg::kUpsample;
      else throw Error(ErrorKind::kInvalidArgument, "--alg=" + alg + " is not relu, leaky_relu, add, concat or nearest");
    } else {
      throw Error(ErrorKind::kInvalidArgument,
                  "--alg is for --pool and --eltwise, not --" +
                      to_string(o.driver));
    }
  }
  require(o.help || !o.problems.empty(), ErrorKind::kInvalidArgument,
          "no problem given (see --help)");
  check_device(o);
  require((o.driver != ProblemKind::kPooling &&
           o.driver != ProblemKind::kBatchNorm &&
           o.driver != ProblemKind::kGroupNorm &&
           o.driver != ProblemKind::kElementwise &&
           o.driver != ProblemKind::kInterpolate) ||
              o.dir == BenchDir::kForward || o.dir == BenchDir::kBackwardData ||
              o.dir == BenchDir::kAll,
          ErrorKind::kInvalidArgument,
          "--pool, --bnorm, --gnorm, --interp and --eltwise: --dir=fwd, "
          "bwd_d or all");
  require(o.driver != ProblemKind::kGroupNorm ||
              (o.impl == BenchImpl::kDistconv &&
               o.device == BenchDevice::kCpu),
          ErrorKind::kUnsupported,
          "--gnorm runs distconv's host layer only: oneDNN 3.2 has no group "
          "normalisation primitive and the layer no GPU version");
  require(o.driver != ProblemKind::kInterpolate ||
              (o.impl == BenchImpl::kDistconv && o.device == BenchDevice::kCpu),
          ErrorKind::kUnsupported,
          "--interp runs distconv's host layer only (the layer has no GPU "
          "version; no baseline)");
  const bool half = o.dt == BenchDataType::kBf16 || o.dt == BenchDataType::kF16;
  require(o.dt != BenchDataType::kF16 ||
              o.driver == ProblemKind::kConvolution ||
              o.driver == ProblemKind::kInterpolate,
          ErrorKind::kInvalidArgument, "--dt=f16 is for --conv and --interp");
  require(o.impl != BenchImpl::kOnednn || !half ||
              o.driver == ProblemKind::kConvolution,
          ErrorKind::kInvalidArgument, "--impl=onednn with --dt=",
          to_string(o.dt), " is for --conv (the other baselines are fp32)");
  require(o.impl != BenchImpl::kOnednn || o.dt != BenchDataType::kF64,
          ErrorKind::kInvalidArgument,
          "--impl=onednn needs --dt=f32, bf16 or f16 (oneDNN has no fp64 "
          "convolution)");
  require(!half || o.dump_dir.empty(), ErrorKind::kInvalidArgument,
          "--dump-dir writes f32 and f64 runs: not with --dt=",
          to_string(o.dt));
  if (o.padding_mode == PaddingMode::kCircular) {
    require(o.driver == ProblemKind::kConvolution ||
                o.driver == ProblemKind::kDeconvolution ||
                o.driver == ProblemKind::kPooling,
            ErrorKind::kInvalidArgument,
            "--padding-mode=circular is for --conv, --deconv and --pool");
    require(o.impl == BenchImpl::kDistconv, ErrorKind::kInvalidArgument,
            "--impl=", to_string(o.impl),
            " has no circular padding (it pads with zeros)");
    for (ConvProblem& p : o.problems) {
      p.desc.padding_mode.assign(p.desc.spatial_dims(),
                                 PaddingMode::kCircular);
      p.desc.validate(p.src_shape);
    }
  }
  require(o.kernel_cache.empty() || o.cpu.search == ConvImplSearch::kMeasured,
          ErrorKind::kInvalidArgument,
          "--kernel-cache is for --kernel-choice=measured");
  require(o.cpu.search == ConvImplSearch::kHeuristic ||
              ((o.driver == ProblemKind::kConvolution ||
                o.driver == ProblemKind::kDeconvolution ||
                o.driver == ProblemKind::kPooling) &&
               o.device == BenchDevice::kCpu && o.impl == BenchImpl::kDistconv),
          ErrorKind::kInvalidArgument,
          "--kernel-choice=measured is for the host layers of --conv, "
          "--deconv and --pool");
  require(!o.pool_impl || o.cpu.search == ConvImplSearch::kHeuristic,
          ErrorKind::kInvalidArgument,
          "--pool-impl and --kernel-choice=measured both choose pooling's "
          "implementation: give one of them");
  require(!o.pool_impl ||
              (o.driver == ProblemKind::kPooling &&
               o.device == BenchDevice::kCpu && o.impl == BenchImpl::kDistconv),
          ErrorKind::kInvalidArgument,
          "--pool-impl is for the host layers of --pool");
  require(o.input == ConvInput::kHaloBuffer ||
              (o.driver != ProblemKind::kBatchNorm &&
               o.driver != ProblemKind::kGroupNorm &&
               o.driver != ProblemKind::kElementwise &&
               o.device == BenchDevice::kCpu && o.impl == BenchImpl::kDistconv),
          ErrorKind::kInvalidArgument,
          "--input=in_place is for the host layers of --conv, --deconv, "
          "--pool and --interp");
  return o;
}

}  // namespace distconv
