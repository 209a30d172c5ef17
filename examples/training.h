// What the training examples (segmentation.cc, cosmoflow.cc) share: their
// parameters and SGD, the command-line options every one of them takes,
// synthetic data written from global indices, and the per-step log.
//
//   TrainOptions opt;                       // --grid, --steps, --lr, ...
//   parse_args(argc, argv, &opt, {{"--size=", &size}});
//   Param w(n);
//   w.init_uniform(bound, /*seed=*/1);      // the same on every rank
//   ProcessGrid grid(MPI_COMM_WORLD, grid_or(opt.grid, fallback, 4));
//   Net net(grid, ...);    // params(), step(), take_comm_wait()
//   train(net, grid, opt, global_samples);  // SGD steps, rank 0 logs them
//
// Parameters are whole on every rank (the examples do not split channels),
// and the layers already sum their gradients over the grid, so every rank
// applies the same update to the same values.
#ifndef DISTCONV_EXAMPLES_TRAINING_H_
#define DISTCONV_EXAMPLES_TRAINING_H_

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/process_grid.h"
#include "distconv/shape.h"
#include "io/checkpoint.h"
#include "io/h5_file.h"
#include "kernels/conv_impl.h"
#include "layers/batch_norm.h"
#include "layers/pooling.h"
#include "layers/profile_work.h"

namespace distconv {
namespace examples {

// One learnable array and its gradient (and momentum buffer).
struct Param {
  explicit Param(Index size);
  // value[i] uniform in [-bound, bound] from a fixed-seed generator: the
  // same values on every rank and every grid.
  void init_uniform(double bound, unsigned seed);
  void fill(float v);

  std::vector<float> value, grad, velocity;
};

// A Param's value and gradient where the layers of Space read and write
// them: the Param's own arrays in host memory; in device memory, copies
// there, the value copied in by upload() (before a step) and the
// gradient copied out by download() (after it), while SGD and
// checkpoints keep to the Param.
template <typename Space>
class ParamIn {
 public:
  explicit ParamIn(Param* p)
      : param_(p),
        device_(nullptr, &Space::deallocate),
        size_(p->value.size()) {
    if constexpr (!Space::kHostAccessible) {
      device_.reset(Space::allocate(2 * sizeof(float) * size_));
    }
  }
  float* value() const {
    if constexpr (Space::kHostAccessible) return param_->value.data();
    return static_cast<float*>(device_.get());
  }
  float* grad() const {
    if constexpr (Space::kHostAccessible) return param_->grad.data();
    return static_cast<float*>(device_.get()) + size_;
  }
  void upload() const {
    if constexpr (!Space::kHostAccessible) {
      Space::copy_to_device(value(), param_->value.data(),
                            sizeof(float) * size_);
    }
  }
  void download() const {
    if constexpr (!Space::kHostAccessible) {
      Space::copy_to_host(param_->grad.data(), grad(), sizeof(float) * size_);
    }
  }
  // It points at a Param of the object holding both: neither moves.
  ParamIn(const ParamIn&) = delete;
  ParamIn& operator=(const ParamIn&) = delete;

 private:
  Param* param_;
  std::unique_ptr<void, void (*)(void*)> device_;
  std::size_t size_;
};

// The profile's passes, as the networks name them.
inline constexpr ProfilePass kFwd = ProfilePass::kForward;
inline constexpr ProfilePass kData = ProfilePass::kBackwardData;
inline constexpr ProfilePass kWeights = ProfilePass::kBackwardWeights;

// A step's forward and backward (fn(), returning the loss) between
// copying the parameters in and their gradients out.
template <typename Space, typename Fn>
double step_with(const std::vector<const ParamIn<Space>*>& params, Fn fn) {
  for (const ParamIn<Space>* p : params) p->upload();
  const double loss = fn();
  for (const ParamIn<Space>* p : params) p->download();
  return loss;
}

// Plain SGD with (PyTorch's) momentum: v = momentum * v + g; w -= lr * v.
struct Sgd {
  double lr = 0.01;
  double momentum = 0.9;
  void step(const std::vector<Param*>& params) const;
};

// The options every training example takes:
//   --grid=NxCx[D]xHxW   the process grid of every layer (default: the
//                        example's)
//   --grid=auto          each unit's grid from the planner
//                        (examples/unit_grids.h)
//   --grids=G1,G2,...    each unit's grid, given
//   --machine=FILE       the planner's machine constants (default
//                        perf/machines/this_machine.txt)
//   --steps=K            SGD steps (default 10)
//   --lr=X, --momentum=X SGD's learning rate and momentum
//   --losses=FILE        rank 0 writes "step loss" lines there (the steps
//                        this run executed)
//   --timeout_s=S        a hung run fails after S seconds (SIGALRM)
//   --data=FILE.h5       inputs and targets read from FILE (written by the
//                        example's --write-data), a batch per step (see
//                        BatchOrder); default: the example's synthetic batch
//                        (cosmoflow also takes a directory of files in the
//                        public layout: examples/cosmoflow_files.h)
//   --data-window=C0xH0xW0 (C0xD0xH0xW0 in 3D)
//                        read each sample of a larger --data file from
//                        this offset (the window the network takes);
//                        without it, every extent of the file's samples
//                        must be the network's
//   --checkpoint-dir=DIR --checkpoint-every=K
//                        a checkpoint after every K-th step (io/checkpoint.h)
//   --resume             continue from the newest good checkpoint in DIR
//                        (--steps counts from the start of training)
//   --padding-mode=zeros|circular
//                        what the padding of the "same" convolutions
//                        holds: zeros (default), or the other end's cells
//                        in every spatial dimension (periodic data)
//   --precision=f32|bf16 the activations' (and their gradients') element
//                        type: fp32 (default), or bf16 with fp32
//                        parameters, gradients and SGD (mixed precision)
//   --device=cpu|gpu     the layers in host memory (default) or in GPU
//                        memory (either precision; a build with
//                        --config=cuda; rank r on GPU r % GPUs); SGD runs
//                        on the host either way
//   --write-data=FILE.h5 [--data-samples=M]
//                        write the example's synthetic data set of M
//                        samples (default: one batch) for --data, and exit
//   --kernel-choice=heuristic|measured
//                        how the convolutions and poolings pick their
//                        CPU kernels: rules with no timing (default), or
//                        timed when the network is built
//                        (kernels/conv_impl.h, kernels/pool_impl.h; the
//                        choices shared by the network's layers of the
//                        same shapes, kernels/kernel_cache.h)
//   --bn-relu=fused|separate
//                        batch norm and ReLU in one sweep over memory
//                        (default; host memory), or as two layers
//   --profile            time every layer's passes (layers/profile.h) in
//                        the steps after the first; rank 0 prints the
//                        table after the last step (host memory only)
//   --profile-json=FILE  the same, and rank 0 writes it as JSON to FILE
//                        (perf/plot_profile.py draws it)
//   --help               these options, the example's own with their
//                        defaults, and exit
enum class GridMode { kGiven, kPerUnit, kAuto };

// --precision: the activations' element type. bf16 keeps the parameters,
// their gradients and SGD in fp32 (the layers' Compute<bf16>).
enum class Precision { kF32, kBf16 };

// --device: where the layers and their tensors live.
enum class Device { kCpu, kGpu };

// --bn-relu: the blocks' batch norm and ReLU as one layer
// (BatchNormOptions::activation, host memory; device memory keeps two), or
// as two.
enum class BnRelu { kFused, kSeparate };

struct TrainOptions {
  GridMode grid_mode = GridMode::kGiven;
  Shape grid;                     // kGiven; empty: the example's default
  std::vector<Shape> unit_grids;  // kPerUnit
  std::string machine_path = "perf/machines/this_machine.txt";
  int steps = 10;
  double lr = 0.01;
  double momentum = 0.9;
  std::string losses_path;
  std::string data_path;
  Shape data_window;  // empty: the file's samples are the network's
  std::string checkpoint_dir;
  int checkpoint_every = 0;  // 0: no checkpoints
  bool resume = false;
  std::string write_data_path;
  Index data_samples = 0;  // 0: one batch
  PaddingMode padding_mode = PaddingMode::kZeros;
  Precision precision = Precision::kF32;
  Device device = Device::kCpu;
  ConvImplSearch kernel_choice = ConvImplSearch::kHeuristic;
  BnRelu bn_relu = BnRelu::kFused;
  bool profile = false;
  std::string profile_json;  // --profile-json (sets profile)
  // True when `arg` was one of the options above (and is now set); throws
  // kInvalidArgument for a malformed value.
  bool parse(const std::string& arg);
};

// A positive integer option's value; throws kInvalidArgument naming `arg`.
Index positive_integer(const std::string& arg, const char* value);

// An example's own option: "--key=" and where its positive integer goes.
struct IntegerOption {
  const char* key;
  Index* value;
};
// Parses argv[1..]: TrainOptions' options and the example's own; anything
// else throws kInvalidArgument, as do --checkpoint-every and --resume
// without --checkpoint-dir.
void parse_args(int argc, char** argv, TrainOptions* train,
                const std::vector<IntegerOption>& own);
// How to read the batch from sample `first` of a --data file of `ndims`
// dimensions: a batch of samples, or with --data-window (`window`: its
// offsets, C first) a box at that offset of each sample; throws
// kInvalidArgument when `window` has another number of offsets.
io::H5ReadOptions data_read(const Shape& window, Index first, int ndims);

// The convolutions' CPU kernel options of --kernel-choice: measured ones
// share one cache (the network's layers of equal shapes time once; the
// poolings take it too, examples/conv_block.h).
CpuConvOptions kernel_options(const TrainOptions& opt);

// `grid` when set (its dimensions must be `ndims`), else `fallback`.
Shape grid_or(const Shape& grid, const Shape& fallback, int ndims);

// Seconds a rank was blocked on communication.
struct CommWait {
  double halo_s = 0;       // halo exchanges (forward and reverse)
  double allreduce_s = 0;  // gradient allreduces (wait_gradients)

  // Adds a convolution's or transposed convolution's stats() and resets
  // them.
  template <typename Layer>
  void take(Layer& layer) {
    halo_s += layer.stats().halo_wait_s;
    allreduce_s += layer.stats().allreduce_wait_s;
    layer.reset_stats();
  }
  // A pooling's (halos only).
  template <typename T, typename Space>
  void take(Pooling<T, Space>& pool) {
    halo_s += pool.stats().halo_wait_s;
    pool.reset_stats();
  }
  CommWait& operator+=(const CommWait& o) {
    halo_s += o.halo_s;
    allreduce_s += o.allreduce_s;
    return *this;
  }
};

// Rank 0 prints one line per step (step, loss, time, images/s) and the
// means over the steps after the first (the first plans memory and warms
// caches) at the end, as a line for people and one for scripts:
//   result {"ms_per_step": 44.4, "images_per_s": 45.0, "halo_wait_ms": 1.2,
//           "allreduce_wait_ms": 0.7}
// (rank 0's waits). With a path, it also writes "step loss" lines there.
class StepLog {
 public:
  StepLog(MPI_Comm comm, Index global_samples, const std::string& path);
  ~StepLog();
  StepLog(const StepLog&) = delete;
  StepLog& operator=(const StepLog&) = delete;
  // `wait`: this step's blocked time on rank 0.
  void record(int step, double loss, double seconds, const CommWait& wait);
  void finish();

 private:
  bool root_ = false;
  Index samples_;
  std::FILE* file_ = nullptr;
  int steps_ = 0;
  double later_seconds_ = 0;  // steps after the first (no warm-up)
  CommWait later_wait_;
};

// Reads t's shard through read(DistTensor<float>&): directly for float;
// for another type, into `staging` (made on first use in t's layout), each
// value then rounded into t (the data files hold fp32).
template <typename T, typename Read>
void read_as(DistTensor<T>& t, std::optional<DistTensor<float>>& staging,
             Read read) {
  if constexpr (std::is_same_v<T, float>) {
    read(t);
  } else {
    if (!staging) staging.emplace(t.grid(), t.layout());
    read(*staging);
    const StridedView<const float> from = std::as_const(*staging).interior();
    t.interior().for_each([&](const Shape& i, T& v) { v = from(i); });
  }
}

// `from`'s whole buffer into `to` (the same layout), in either memory
// space, each element converted to To (fp32 data rounded to bf16).
template <typename From, typename To, typename Space>
void to_space(const DistTensor<From>& from, DistTensor<To, Space>& to) {
  if constexpr (Space::kHostAccessible) {
    std::copy(from.data(), from.data() + from.size(), to.data());
  } else if constexpr (std::is_same_v<From, To>) {
    Space::copy_to_device(to.data(), from.data(), sizeof(To) * from.size());
  } else {
    const std::vector<To> converted(from.data(), from.data() + from.size());
    Space::copy_to_device(to.data(), converted.data(),
                          sizeof(To) * converted.size());
  }
}

// Writes fn(global index) into every cell of t's shard (in device memory
// through a host copy of t's buffer).
template <typename T, typename Fn>
void fill_global(DistTensor<T>& t, Fn fn) {
  const Shape lower = t.shard().lower;
  t.interior().for_each([&](const Shape& i, T& v) { v = fn(i + lower); });
}
template <typename T, typename Space, typename Fn>
void fill_global(DistTensor<T, Space>& t, Fn fn) {
  DistTensor<T> host(t.grid(), t.layout());
  fill_global(host, fn);
  to_space(host, t);
}

// Which samples each step trains on when the data come from a file: its
// M samples in M / N batches of N consecutive samples, the batches in a
// random order each epoch (Fisher-Yates over a mt19937_64 seeded 1). Its
// position and the generator's state at the start of the epoch go into
// checkpoints, so a resumed run sees the batches it would have seen.
class BatchOrder {
 public:
  BatchOrder(Index file_samples, Index batch);
  Index next();  // the first sample of the next batch
  void add_to(io::CheckpointState* state);
  void restored();  // after a checkpoint was loaded into add_to()'s entries

 private:
  void shuffle();
  Index batch_;
  std::vector<Index> order_;
  std::int64_t position_ = 0;  // batches handed out so far
  std::string epoch_rng_;      // the generator at the epoch's start
  std::mt19937_64 rng_{1};
};

// What a checkpoint keeps of a batch norm (any element type and memory
// space): its running statistics.
struct NormState {
  std::function<const std::vector<double>&()> mean, variance;
  std::function<void(const double* mean, const double* variance)> set;
};
template <typename Norm>
NormState norm_state(Norm* n) {
  return {
      [n]() -> const std::vector<double>& { return n->running_mean(); },
      [n]() -> const std::vector<double>& { return n->running_variance(); },
      [n](const double* m, const double* v) { n->set_running_stats(m, v); }};
}

// A run's state in checkpoints: the parameters and their momentum, the
// batch norms' running statistics, the step, the data position.
class TrainingState {
 public:
  // `description`: what the run's checkpoints belong to (the network and
  // its sizes): a resume from another's is an error (io/checkpoint.h).
  TrainingState(const std::string& description,
                const std::vector<Param*>& params, std::vector<NormState> norms,
                BatchOrder* order);
  // Saves after `step` when the options ask for it.
  void maybe_save(const TrainOptions& opt, const io::CheckpointDir& dir,
                  int step);
  // With --resume: the step of the checkpoint loaded (0: the directory
  // holds none). A directory of another network's checkpoints, or of
  // checkpoints none of which loads, is an error: nothing there is
  // written over.
  int resume(const TrainOptions& opt, const io::CheckpointDir& dir,
             MPI_Comm comm);

 private:
  std::vector<NormState> norms_;
  BatchOrder* order_;
  std::vector<std::vector<double>> means_, variances_;
  std::int64_t step_ = 0;
  io::CheckpointState state_;
};

// Collective over `comm`: rank 0 prints the profile's table and writes
// --profile-json's file.
void report_profile(const Profile& profile, const TrainOptions& opt,
                    MPI_Comm comm);

// Trains `net` for opt.steps SGD steps, logging each; Net has
// description() (what its checkpoints belong to), params() ->
// std::vector<Param*>, batch_norms() -> pointers to its
// BatchNorm<T, Space>s, open_data(opt) -> the samples in --data (checking
// the file's datasets) and load_batch(first sample) (with --data), step() ->
// the loss (forward and backward, gradients in the params' grad) and
// take_comm_wait() -> the CommWait of this rank since the last call.
// Checkpoints and --resume as TrainOptions says.
template <typename Net>
void train(Net& net, const ProcessGrid& grid, const TrainOptions& opt,
           Index global_samples) {
  const Sgd sgd{opt.lr, opt.momentum};
  std::optional<BatchOrder> order;
  if (!opt.data_path.empty()) {
    order.emplace(net.open_data(opt), global_samples);
  }
  const std::vector<Param*> params = net.params();
  std::vector<NormState> norms;
  for (auto* n : net.batch_norms()) norms.push_back(norm_state(n));
  TrainingState state(net.description(), params, std::move(norms),
                      order ? &*order : nullptr);
  std::optional<io::CheckpointDir> dir;
  if (!opt.checkpoint_dir.empty()) dir.emplace(grid.comm(), opt.checkpoint_dir);
  const int first = dir ? state.resume(opt, *dir, grid.comm()) + 1 : 1;
  StepLog log(grid.comm(), global_samples, opt.losses_path);
  std::optional<Profile> profile;
  if (opt.profile) profile.emplace();
  for (int s = first; s <= opt.steps; ++s) {
    const double start = MPI_Wtime();
    // The profile leaves out the first step (plans' first calls, pages
    // faulted in), unless it is the only one.
    Profile* p = profile && (s > first || s == opt.steps) ? &*profile : nullptr;
    net.set_profile(p);
    if (p) p->begin_step();
    if (order) {
      profiled(p, "data", ProfilePass::kOther, {},
               [&] { net.load_batch(order->next()); });
    }
    const double loss = net.step();
    profiled(p, "sgd", ProfilePass::kUpdate, {}, [&] { sgd.step(params); });
    if (p) p->end_step();
    log.record(s, loss, MPI_Wtime() - start, net.take_comm_wait());
    if (dir) state.maybe_save(opt, *dir, s);
  }
  log.finish();
  if (profile) report_profile(*profile, opt, MPI_COMM_WORLD);
}

// "fp32", or "bf16 (fp32 parameters)", and ", GPU memory" with
// --device=gpu: the examples' first line.
std::string describe(const TrainOptions& opt);

// Builds Net<float> or Net<bf16>, as opt.precision says, from `args`, and
// trains it (train()) with its log on the grid loss_grid(net) returns.
template <template <typename> class Net, typename LossGrid, typename... Args>
void train_in_precision(const TrainOptions& opt, Index global_samples,
                        LossGrid loss_grid, const Args&... args) {
  if (opt.precision == Precision::kBf16) {
    Net<bf16> net(args...);
    train(net, loss_grid(net), opt, global_samples);
  } else {
    Net<float> net(args...);
    train(net, loss_grid(net), opt, global_samples);
  }
}

// Runs body(argc, argv) inside MPI_Init/MPI_Finalize; a distconv::Error
// (thrown the same on every rank) is printed by every rank, as
// "PROGRAM (rank R of N): MESSAGE", and exits 2.
int run_main(int argc, char** argv, int (*body)(int, char**));

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_TRAINING_H_
