#include "examples/training.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>

#include "distconv/error.h"
#include "kernels/kernel_cache.h"
#include "perf/cli_args.h"

namespace distconv {
namespace examples {

Param::Param(Index size) : value(size), grad(size), velocity(size) {}

void Param::init_uniform(double bound, unsigned seed) {
  std::mt19937 gen(seed);
  // Not std::uniform_real_distribution: its output is the library's
  // choice; this one is fixed by mt19937's definition.
  for (float& v : value) {
    v = static_cast<float>(bound * (2.0 * (gen() / 4294967296.0) - 1.0));
  }
}

void Param::fill(float v) {
  for (float& x : value) x = v;
}

void Sgd::step(const std::vector<Param*>& params) const {
  for (Param* p : params) {
    // Vectorised (the scalar loop took 1% of CosmoFlow's step), the same
    // arithmetic: products in double, rounded to float.
    float* const value = p->value.data();
    float* const velocity = p->velocity.data();
    const float* const grad = p->grad.data();
    const std::size_t n = p->value.size();
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
      velocity[i] = static_cast<float>(momentum * velocity[i]) + grad[i];
      value[i] -= static_cast<float>(lr * velocity[i]);
    }
  }
}

Index positive_integer(const std::string& arg, const char* value) {
  const Shape s = parse_dims(value);
  require(s.ndims() == 1 && s[0] >= 1, ErrorKind::kInvalidArgument, arg,
          ": expected a positive integer");
  return s[0];
}

namespace {

// A number in [low, high); throws kInvalidArgument naming `arg`.
double number_in(const std::string& arg, const char* value, double low,
                 double high) {
  char* end = nullptr;
  const double v = std::strtod(value, &end);
  require(end != value && *end == '\0' && v >= low && v < high,
          ErrorKind::kInvalidArgument, arg, ": expected a number in [", low,
          ", ", high, ")");
  return v;
}

}  // namespace

bool TrainOptions::parse(const std::string& arg) {
  if (const char* v = option_value(arg, "--grid=")) {
    grid_mode = std::string(v) == "auto" ? GridMode::kAuto : GridMode::kGiven;
    grid = grid_mode == GridMode::kAuto ? Shape() : parse_dims(v);
  } else if (const char* v = option_value(arg, "--grids=")) {
    grid_mode = GridMode::kPerUnit;
    unit_grids.clear();
    for (const std::string& g : comma_items(v)) {
      unit_grids.push_back(parse_dims(g));
    }
  } else if (const char* v = option_value(arg, "--machine=")) {
    machine_path = v;
  } else if (const char* v = option_value(arg, "--steps=")) {
    steps = static_cast<int>(positive_integer(arg, v));
  } else if (const char* v = option_value(arg, "--lr=")) {
    lr = number_in(arg, v, 1e-12, 1e3);
  } else if (const char* v = option_value(arg, "--momentum=")) {
    momentum = number_in(arg, v, 0, 1);
  } else if (const char* v = option_value(arg, "--losses=")) {
    losses_path = v;
  } else if (const char* v = option_value(arg, "--data=")) {
    data_path = v;
  } else if (const char* v = option_value(arg, "--data-window=")) {
    data_window = parse_dims(v);
    for (Index e : data_window) {
      require(e >= 0, ErrorKind::kInvalidArgument, arg,
              ": offsets are at least 0");
    }
  } else if (const char* v = option_value(arg, "--checkpoint-dir=")) {
    checkpoint_dir = v;
  } else if (const char* v = option_value(arg, "--checkpoint-every=")) {
    checkpoint_every = static_cast<int>(positive_integer(arg, v));
  } else if (const char* v = option_value(arg, "--write-data=")) {
    write_data_path = v;
  } else if (const char* v = option_value(arg, "--data-samples=")) {
    data_samples = positive_integer(arg, v);
  } else if (const char* v = option_value(arg, "--padding-mode=")) {
    const std::string mode = v;
    require(mode == "zeros" || mode == "circular", ErrorKind::kInvalidArgument,
            arg, ": the padding mode is zeros or circular");
    padding_mode =
        mode == "circular" ? PaddingMode::kCircular : PaddingMode::kZeros;
  } else if (const char* v = option_value(arg, "--kernel-choice=")) {
    const std::string c = v;
    require(c == "heuristic" || c == "measured", ErrorKind::kInvalidArgument,
            arg, ": the kernel choice is heuristic or measured");
    kernel_choice = c == "measured" ? ConvImplSearch::kMeasured
                                    : ConvImplSearch::kHeuristic;
  } else if (const char* v = option_value(arg, "--bn-relu=")) {
    const std::string b = v;
    require(b == "fused" || b == "separate", ErrorKind::kInvalidArgument, arg,
            ": batch norm and ReLU are fused or separate");
    bn_relu = b == "separate" ? BnRelu::kSeparate : BnRelu::kFused;
  } else if (const char* v = option_value(arg, "--precision=")) {
    const std::string p = v;
    require(p == "f32" || p == "bf16", ErrorKind::kInvalidArgument, arg,
            ": the precision is f32 or bf16");
    precision = p == "bf16" ? Precision::kBf16 : Precision::kF32;
  } else if (const char* v = option_value(arg, "--device=")) {
    const std::string d = v;
    require(d == "cpu" || d == "gpu", ErrorKind::kInvalidArgument, arg,
            ": the device is cpu or gpu");
    device = d == "gpu" ? Device::kGpu : Device::kCpu;
  } else if (arg == "--resume") {
    resume = true;
  } else if (arg == "--profile") {
    profile = true;
  } else if (const char* v = option_value(arg, "--profile-json=")) {
    require(*v != '\0', ErrorKind::kInvalidArgument, arg,
            ": the JSON file's path is missing");
    profile = true;
    profile_json = v;
  } else if (const char* v = option_value(arg, "--timeout_s=")) {
    alarm(static_cast<unsigned>(positive_integer(arg, v)));
  } else {
    return false;
  }
  return true;
}

namespace {

// --help's text: the example's own options with their defaults, then the
// training options with theirs.
std::string usage(const char* program, const TrainOptions& t,
                  const std::vector<IntegerOption>& own) {
  char buf[2048];
  std::string out = "usage: mpirun -np P " + std::string(program) +
                    " [options]\n\nThe network's options:\n";
  for (const IntegerOption& o : own) {
    out += "  " + std::string(o.key) +
           std::to_string(static_cast<long long>(*o.value)) + "\n";
  }
  std::snprintf(
      buf, sizeof buf,
      "\nTraining options (defaults shown; examples/training.h says more):\n"
      "  --grid=NxCx[D]xHxW | --grid=auto | --grids=G1,G2,...\n"
      "                        the layers' process grids (default: the "
      "example's)\n"
      "  --machine=%s\n"
      "                        the planner's machine constants (--grid=auto)\n"
      "  --steps=%d --lr=%g --momentum=%g\n"
      "  --losses=FILE         rank 0 writes \"step loss\" lines there\n"
      "  --data=FILE.h5 [--data-window=C0xH0xW0]\n"
      "                        read the batches from FILE (default: the "
      "synthetic batch)\n"
      "  --write-data=FILE.h5 [--data-samples=M]\n"
      "                        write the synthetic data set and exit\n"
      "  --checkpoint-dir=DIR --checkpoint-every=K [--resume]\n"
      "  --padding-mode=zeros|circular   (default zeros)\n"
      "  --precision=f32|bf16            (default f32)\n"
      "  --device=cpu|gpu                (default cpu)\n"
      "  --kernel-choice=heuristic|measured\n"
      "                        the convolutions' and poolings' CPU kernels "
      "by rules, or\n"
      "                        timed (default heuristic)\n"
      "  --bn-relu=fused|separate        batch norm and ReLU in one sweep, or "
      "two layers\n"
      "                        (default fused; GPU memory: separate)\n"
      "  --profile [--profile-json=FILE] time every layer's passes; a table "
      "after the\n"
      "                        last step (and FILE as JSON for "
      "perf/plot_profile.py)\n"
      "  --timeout_s=S         fail after S seconds\n"
      "  --help                this text\n",
      t.machine_path.c_str(), t.steps, t.lr, t.momentum);
  return out + buf;
}

}  // namespace

void parse_args(int argc, char** argv, TrainOptions* train,
                const std::vector<IntegerOption>& own) {
  if (help_printed(argc, argv, usage(argv[0], *train, own).c_str())) {
    MPI_Finalize();
    std::exit(0);
  }
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (train->parse(arg)) continue;
    bool known = false;
    for (const IntegerOption& o : own) {
      if (const char* v = option_value(arg, o.key)) {
        *o.value = positive_integer(arg, v);
        known = true;
        break;
      }
    }
    require(known, ErrorKind::kInvalidArgument, "unknown option ", arg);
  }
  // Options that do nothing without another one.
  require(train->checkpoint_every == 0 || !train->checkpoint_dir.empty(),
          ErrorKind::kInvalidArgument,
          "--checkpoint-every=", train->checkpoint_every,
          " needs --checkpoint-dir=DIR (where the checkpoints go)");
  require(!train->resume || !train->checkpoint_dir.empty(),
          ErrorKind::kInvalidArgument,
          "--resume needs --checkpoint-dir=DIR (where the checkpoints are)");
  require(!train->profile || train->device == Device::kCpu,
          ErrorKind::kUnsupported,
          "--profile times layers in host memory; with --device=gpu the "
          "passes queue work on streams it does not synchronise");
  require(train->data_window.ndims() == 0 || !train->data_path.empty(),
          ErrorKind::kInvalidArgument,
          "--data-window=", train->data_window.to_string(),
          " needs --data=FILE.h5 (the data set it is a window of)");
}

io::H5ReadOptions data_read(const Shape& window, Index first, int ndims) {
  io::H5ReadOptions read;
  read.offset = Shape::filled(ndims, 0);
  read.offset[0] = first;
  if (window.ndims() == 0) {
    read.window = io::H5Window::kSamples;
    return read;
  }
  require(window.ndims() == ndims - 1, ErrorKind::kInvalidArgument,
          "--data-window=", window.to_string(), " has ", window.ndims(),
          " offsets; this example needs ", ndims - 1,
          ndims == 4 ? " (CxHxW)" : " (CxDxHxW)");
  for (int d = 1; d < ndims; ++d) read.offset[d] = window[d - 1];
  read.window = io::H5Window::kBox;
  return read;
}

CpuConvOptions kernel_options(const TrainOptions& opt) {
  CpuConvOptions o;
  o.search = opt.kernel_choice;
  if (o.search == ConvImplSearch::kMeasured) {
    o.cache = std::make_shared<KernelCache>();
  }
  return o;
}

Shape grid_or(const Shape& grid, const Shape& fallback, int ndims) {
  if (grid.ndims() == 0) return fallback;
  require(grid.ndims() == ndims, ErrorKind::kInvalidArgument,
          "--grid=", grid.to_string(), " has ", grid.ndims(),
          " dimensions; this example", " needs ", ndims,
          ndims == 4 ? " (NxCxHxW)" : " (NxCxDxHxW)");
  return grid;
}

StepLog::StepLog(MPI_Comm comm, Index global_samples, const std::string& path)
    : samples_(global_samples) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  root_ = rank == 0;
  int opened = 1;
  if (root_ && !path.empty()) {
    file_ = std::fopen(path.c_str(), "w");
    opened = file_ != nullptr;
  }
  MPI_Bcast(&opened, 1, MPI_INT, 0, comm);
  require(opened, ErrorKind::kInvalidArgument, "cannot write --losses=", path);
}

StepLog::~StepLog() {
  if (file_) std::fclose(file_);
}

void StepLog::record(int step, double loss, double seconds,
                     const CommWait& wait) {
  ++steps_;
  if (steps_ > 1) {
    later_seconds_ += seconds;
    later_wait_ += wait;
  }
  if (!root_) return;
  std::printf("step %3d  loss %.6f  time %8.1f ms  %8.2f images/s\n", step,
              loss, 1e3 * seconds, samples_ / seconds);
  std::fflush(stdout);
  if (file_) std::fprintf(file_, "%d %.9g\n", step, loss);
}

void StepLog::finish() {
  if (!root_ || steps_ < 2) return;
  const int n = steps_ - 1;
  const double mean = later_seconds_ / n;
  const double halo_ms = 1e3 * later_wait_.halo_s / n;
  const double allreduce_ms = 1e3 * later_wait_.allreduce_s / n;
  std::printf(
      "mean of steps 2-%d: %.1f ms/step, %.2f images/s; rank 0 blocked "
      "%.1f ms/step on halo exchanges, %.1f ms/step on gradient "
      "allreduces\n",
      steps_, 1e3 * mean, samples_ / mean, halo_ms, allreduce_ms);
  std::printf(
      "result {\"ms_per_step\": %.3f, \"images_per_s\": %.3f, "
      "\"halo_wait_ms\": %.3f, \"allreduce_wait_ms\": %.3f}\n",
      1e3 * mean, samples_ / mean, halo_ms, allreduce_ms);
}

BatchOrder::BatchOrder(Index file_samples, Index batch) : batch_(batch) {
  require(file_samples >= batch && file_samples % batch == 0,
          ErrorKind::kInvalidArgument, "--data: the file's ", file_samples,
          " samples are not a whole number of batches of ", batch);
  order_.resize(static_cast<std::size_t>(file_samples / batch));
}

void BatchOrder::shuffle() {
  for (std::size_t i = 0; i < order_.size(); ++i)
    order_[i] = static_cast<Index>(i);
  for (std::size_t i = order_.size(); i > 1; --i) {
    std::swap(order_[i - 1], order_[rng_() % i]);
  }
}

Index BatchOrder::next() {
  const std::size_t within = static_cast<std::size_t>(
      position_ % static_cast<std::int64_t>(order_.size()));
  if (within == 0) {  // a new epoch
    std::ostringstream text;
    text << rng_;
    epoch_rng_ = text.str();
    shuffle();
  }
  ++position_;
  return order_[within] * batch_;
}

void BatchOrder::add_to(io::CheckpointState* state) {
  state->add("data.position", &position_);
  state->add("data.rng", &epoch_rng_);
}

void BatchOrder::restored() {
  // Replays the epoch's shuffle from the generator as it was at its start:
  // the order and the generator are then as they were at the checkpoint.
  if (epoch_rng_.empty()) return;  // saved before the first batch
  std::istringstream text(epoch_rng_);
  text >> rng_;
  require(!text.fail(), ErrorKind::kIo,
          "the checkpoint's data.rng is not a generator state");
  shuffle();
}

TrainingState::TrainingState(const std::string& description,
                             const std::vector<Param*>& params,
                             std::vector<NormState> norms, BatchOrder* order)
    : norms_(std::move(norms)),
      order_(order),
      means_(norms_.size()),
      variances_(norms_.size()) {
  state_.describe(description);
  // The statistics' arrays at their sizes: a checkpoint loads only into
  // arrays of the length it holds.
  for (std::size_t i = 0; i < norms_.size(); ++i) {
    means_[i] = norms_[i].mean();
    variances_[i] = norms_[i].variance();
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string name = "param" + std::to_string(i);
    state_.add(name + ".value", &params[i]->value);
    state_.add(name + ".momentum", &params[i]->velocity);
  }
  for (std::size_t i = 0; i < norms_.size(); ++i) {
    const std::string name = "batch_norm" + std::to_string(i);
    state_.add(name + ".running_mean", &means_[i]);
    state_.add(name + ".running_variance", &variances_[i]);
  }
  state_.add("step", &step_);
  if (order_) order_->add_to(&state_);
}

void TrainingState::maybe_save(const TrainOptions& opt,
                               const io::CheckpointDir& dir, int step) {
  if (opt.checkpoint_every == 0 || step % opt.checkpoint_every != 0) return;
  for (std::size_t i = 0; i < norms_.size(); ++i) {
    means_[i] = norms_[i].mean();
    variances_[i] = norms_[i].variance();
  }
  step_ = step;
  dir.save(step, state_);
}

int TrainingState::resume(const TrainOptions& opt, const io::CheckpointDir& dir,
                          MPI_Comm comm) {
  if (!opt.resume) return 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::string> skipped;
  const std::optional<std::int64_t> step = dir.load_latest(state_, &skipped);
  if (rank == 0) {
    for (const std::string& s : skipped)
      std::printf("resume: skipped %s\n", s.c_str());
    if (step) {
      std::printf("resume: from %s (step %lld)\n", dir.path(*step).c_str(),
                  static_cast<long long>(*step));
    } else {
      std::printf("resume: no checkpoint in %s, starting at step 1\n",
                  opt.checkpoint_dir.c_str());
    }
    std::fflush(stdout);
  }
  if (!step) return 0;
  for (std::size_t i = 0; i < norms_.size(); ++i) {
    norms_[i].set(means_[i].data(), variances_[i].data());
  }
  if (order_) order_->restored();
  return static_cast<int>(step_);
}

std::string describe(const TrainOptions& opt) {
  std::string out =
      opt.precision == Precision::kBf16 ? "bf16 (fp32 parameters)" : "fp32";
  if (opt.device == Device::kGpu) out += ", GPU memory";
  return out;
}

int run_main(int argc, char** argv, int (*body)(int, char**)) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = body(argc, argv);
  } catch (const Error& e) {  // the same on every rank
    // Every rank says it, so that each rank's log (mpirun
    // --output-filename, a batch system's per-rank files) has it.
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::fprintf(stderr, "%s (rank %d of %d): %s\n", argv[0], rank, size,
                 e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}

void report_profile(const Profile& profile, const TrainOptions& opt,
                    MPI_Comm comm) {
  const ProfileSummary sum = profile.summarize(comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int written = 1;
  if (rank == 0) {
    std::printf("profile, per step (the steps after the first)\n%s",
                sum.table().c_str());
    if (!opt.profile_json.empty()) {
      std::FILE* f = std::fopen(opt.profile_json.c_str(), "w");
      const std::string json = sum.json();
      written = f != nullptr &&
                std::fwrite(json.data(), 1, json.size(), f) == json.size();
      if (f != nullptr && std::fclose(f) != 0) written = 0;
      if (written) {
        std::printf("profile written to %s\n", opt.profile_json.c_str());
      }
    }
    std::fflush(stdout);
  }
  MPI_Bcast(&written, 1, MPI_INT, 0, comm);
  require(written != 0, ErrorKind::kIo, "--profile-json: cannot write ",
          opt.profile_json);
}

}  // namespace examples
}  // namespace distconv
