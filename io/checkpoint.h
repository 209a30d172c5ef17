// Checkpoints: a training run's state in one HDF5 file per step, written
// atomically and read back on any grid.
//
//   io::CheckpointState state;              // what a checkpoint holds:
//   state.add("conv1.w", &w.value);         //   replicated arrays,
//   state.add("conv1.w.momentum", &w.velocity);
//   state.add("step", &step);               //   integers,
//   state.add("rng", &rng_text);            //   bytes (a generator's state),
//   state.add("field", &tensor);            //   distributed tensors
//   io::CheckpointDir dir(MPI_COMM_WORLD, "ckpt", {/*keep=*/2});
//   dir.save(step, state);                  // DIR/step-00000012.h5
//   ...                                     // after a crash, any grid:
//   std::optional<std::int64_t> from = dir.load_latest(state);
//
// save() writes DIR/step-S.h5.tmp, with a checksum of every dataset
// (io/checksum.h: independent of the grid), closes it, reads every
// dataset back and checks it, syncs the file to disk, and only then
// renames it to DIR/step-S.h5 (and syncs the directory). A crash at any
// point leaves the earlier checkpoints as they were; a leftover .tmp is
// never read and is removed by the next save(). The `keep` newest
// checkpoints stay; older ones are removed after a new one is in place.
//
// load() reads every entry of the state in place, checking each dataset's
// shape, element type and checksum; load_latest() loads the newest
// checkpoint that passes those checks, skipping any that does not. A load
// that fails may leave some entries overwritten; load_latest() then
// overwrites them all from an older checkpoint. A
// replicated array takes the size it had when saved; a distributed tensor
// must have the saved global shape, on any grid (the dataset holds the
// global tensor). Every call is collective over the directory's
// communicator (the tensors' grids must span the same ranks) and throws
// the same Error on every rank.
#ifndef DISTCONV_IO_CHECKPOINT_H_
#define DISTCONV_IO_CHECKPOINT_H_

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "distconv/dist_tensor.h"

namespace distconv::io {

class CheckpointState {
 public:
  // The objects must outlive the state; names are HDF5 dataset names
  // (no '/').
  void add(const std::string& name, std::vector<float>* values);
  void add(const std::string& name, std::vector<double>* values);
  void add(const std::string& name, std::int64_t* value);
  void add(const std::string& name, std::string* bytes);
  void add(const std::string& name, DistTensor<float>* tensor);
  void add(const std::string& name, DistTensor<double>* tensor);
  void add(const std::string& name, DistTensor<bf16>* tensor);

  using Target =
      std::variant<std::vector<float>*, std::vector<double>*, std::int64_t*,
                   std::string*, DistTensor<float>*, DistTensor<double>*,
                   DistTensor<bf16>*>;
  struct Entry {
    std::string name;
    Target target;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  void add_entry(const std::string& name, Target target);
  std::vector<Entry> entries_;
};

struct CheckpointOptions {
  int keep = 2;  // complete checkpoints kept (at least 1)
};

class CheckpointDir {
 public:
  // Collective; creates the directory if needed.
  CheckpointDir(MPI_Comm comm, const std::string& dir,
                const CheckpointOptions& options = {});

  void save(std::int64_t step, const CheckpointState& state) const;
  void load(std::int64_t step, CheckpointState& state) const;
  // The step loaded, or nothing when no checkpoint loads. Each checkpoint
  // skipped adds its error's message to `skipped` (when not null).
  std::optional<std::int64_t> load_latest(
      CheckpointState& state,
      std::vector<std::string>* skipped = nullptr) const;
  // The steps of the complete checkpoints there, oldest first.
  std::vector<std::int64_t> steps() const;
  std::string path(std::int64_t step) const;  // DIR/step-00000012.h5

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::string dir_;
  CheckpointOptions options_;
};

}  // namespace distconv::io

#endif  // DISTCONV_IO_CHECKPOINT_H_
