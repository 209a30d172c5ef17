#include "examples/training.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

#include "distconv/error.h"
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
    for (size_t i = 0; i < p->value.size(); ++i) {
      p->velocity[i] = static_cast<float>(momentum * p->velocity[i]) + p->grad[i];
      p->value[i] -= static_cast<float>(lr * p->velocity[i]);
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
  } else if (const char* v = option_value(arg, "--timeout_s=")) {
    alarm(static_cast<unsigned>(positive_integer(arg, v)));
  } else {
    return false;
  }
  return true;
}

void parse_args(int argc, char** argv, TrainOptions* train,
                const std::vector<IntegerOption>& own) {
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
}

Shape grid_or(const Shape& grid, const Shape& fallback, int ndims) {
  if (grid.ndims() == 0) return fallback;
  require(grid.ndims() == ndims, ErrorKind::kInvalidArgument, "--grid=",
          grid.to_string(), " has ", grid.ndims(), " dimensions; this example",
          " needs ", ndims, ndims == 4 ? " (NxCxHxW)" : " (NxCxDxHxW)");
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

int run_main(int argc, char** argv, int (*body)(int, char**)) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = body(argc, argv);
  } catch (const Error& e) {  // the same on every rank
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}

}  // namespace examples
}  // namespace distconv
