// Checkpoints: a training run's state in one HDF5 file per step, written
// atomically, read back on any grid, and only by the network it belongs
// to.
//
//   io::CheckpointState state;              // what a checkpoint holds:
//   state.describe("unet: 4x1x256x256, width 16");  // what it belongs to
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
// What a checkpoint belongs to: the state's description and each entry's name
// and kind (its element type and length, or global shape; bytes take any
// length), written in its header (plain text in the file's first bytes, HDF5's
// user block; io/internal/checkpoint_record.h). load() compares them with the
// state's before it reads any entry: a checkpoint of another description, or
// whose entries differ in name, type or size, is Error(kShapeMismatch) on every
// rank naming the differences ("entry 'w': float32 array of 10 there, float32
// array of 12 here"), never read into arrays of another size, and never judged
// damaged. Checkpoints of the first format (no header) are compared by their
// datasets alone.
//
// save() writes DIR/step-S.h5.tmp, with a checksum of every dataset
// (io/checksum.h: independent of the grid) and its header (a hash of the bytes
// after it), closes it, checks it against its header, reads every dataset back
// and checks it, syncs the file to disk, and only then renames it to
// DIR/step-S.h5 (and syncs the directory). A crash at any point leaves the
// earlier checkpoints as they were; a leftover .tmp is never read and is
// removed by the next save(). Before writing anything, save() reads what the
// directory holds: a checkpoint of another network there is
// Error(kShapeMismatch), a newer one of this network Error(kState) (a run
// started over would prune its own checkpoints at once), and nothing is written
// or removed. The `keep` newest checkpoints of this network stay; older ones
// are removed after a new one is in place. A checkpoint that does not load
// (damaged, or perhaps read badly) is never removed by save(), only replaced by
// a save of its own step.
//
// load() then checks the whole file against its header (its size, and a hash of
// its bytes the ranks compute together) before HDF5 reads any of it, so a
// damaged checkpoint is never parsed; then reads every entry, checking each
// dataset's shape, element type and checksum, and that the step inside the file
// is the one its name says. A replicated entry (array, integer, bytes) changes
// only when every entry read well; a distributed tensor is read in place, so a
// load that fails (Error(kIo)) may leave tensors overwritten. load_latest()
// loads the newest checkpoint that passes, skipping damaged ones (kIo), and
// returns nothing when the directory holds no checkpoint; one that holds
// checkpoints of which none loads is Error(kIo) naming why each did not (a
// fresh start would overwrite them). A distributed tensor must have the saved
// global shape, on any grid (the dataset holds the global tensor). Every call
// is collective over the directory's communicator (the tensors' grids must span
// the same ranks) and throws the same Error on every rank.
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
  // What the state belongs to (a network, its sizes): a line of text,
  // compared by load() (empty by default).
  void describe(const std::string& description);
  const std::string& description() const { return description_; }

  // The objects must outlive the state; names are HDF5 dataset names (no
  // '/', no tab or line break, not starting with '.'). A replicated array
  // loads only from a checkpoint of its present length.
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
  std::string description_;
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
  // The step loaded, or nothing when the directory holds no checkpoint.
  // Each damaged checkpoint skipped adds its error's message to `skipped`
  // (when not null); when none loads, Error(kIo).
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
