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

#include <cstdio>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "layers/pooling.h"
#include "distconv/process_grid.h"
#include "distconv/shape.h"

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
//   --losses=FILE        rank 0 writes "step loss" lines there
//   --timeout_s=S        a hung run fails after S seconds (SIGALRM)
enum class GridMode { kGiven, kPerUnit, kAuto };

struct TrainOptions {
  GridMode grid_mode = GridMode::kGiven;
  Shape grid;  // kGiven; empty: the example's default
  std::vector<Shape> unit_grids;  // kPerUnit
  std::string machine_path = "perf/machines/this_machine.txt";
  int steps = 10;
  double lr = 0.01;
  double momentum = 0.9;
  std::string losses_path;
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
// else throws kInvalidArgument.
void parse_args(int argc, char** argv, TrainOptions* train,
                const std::vector<IntegerOption>& own);
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
  void take(Pooling<float>& pool) {
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

// Writes fn(global index) into every cell of t's shard.
template <typename T, typename Fn>
void fill_global(DistTensor<T>& t, Fn fn) {
  const Shape lower = t.shard().lower;
  t.interior().for_each([&](const Shape& i, T& v) { v = fn(i + lower); });
}

// Trains `net` for opt.steps SGD steps, logging each; Net has
// params() -> std::vector<Param*>, step() -> the loss (forward and
// backward, gradients in the params' grad) and take_comm_wait() -> the
// CommWait of this rank since the last call.
template <typename Net>
void train(Net& net, const ProcessGrid& grid, const TrainOptions& opt,
           Index global_samples) {
  const Sgd sgd{opt.lr, opt.momentum};
  StepLog log(grid.comm(), global_samples, opt.losses_path);
  const std::vector<Param*> params = net.params();
  for (int s = 1; s <= opt.steps; ++s) {
    const double start = MPI_Wtime();
    const double loss = net.step();
    sgd.step(params);
    log.record(s, loss, MPI_Wtime() - start, net.take_comm_wait());
  }
  log.finish();
}

// Runs body(argc, argv) inside MPI_Init/MPI_Finalize; a distconv::Error
// (thrown the same on every rank) is printed once and exits 2.
int run_main(int argc, char** argv, int (*body)(int, char**));

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_TRAINING_H_
