#include "io/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <type_traits>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "io/checksum.h"
#include "io/h5_file.h"
#include "io/internal/checkpoint_record.h"
#include "io/internal/file_hash.h"

namespace distconv::io {
namespace {

namespace fs = std::filesystem;
using distconv::internal::check_mpi;
using distconv::internal::run_collectively;
using Entry = CheckpointState::Entry;

using internal::CheckpointRecord;

constexpr char kFormat[] = "distconv checkpoint 2";
constexpr char kFirstFormat[] = "distconv checkpoint 1";  // no manifest
constexpr char kChecksum[] = "checksum";

std::int64_t as_attribute(std::uint64_t sum) {
  std::int64_t v;
  std::memcpy(&v, &sum, sizeof(v));
  return v;
}

// Rank 0's checksum of a replicated array, on every rank.
template <typename T>
std::uint64_t root_checksum(MPI_Comm comm, const T* data, Index n) {
  std::uint64_t sum = checksum(data, Shape{n});
  check_mpi(MPI_Bcast(&sum, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  return sum;
}

// Writes an entry's dataset and returns its checksum.
std::uint64_t write_entry(MPI_Comm comm, H5File& f, const Entry& e) {
  return std::visit(
      [&](auto* target) -> std::uint64_t {
        using Target = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<Target, std::int64_t>) {
          f.write(e.name, Shape{1}, target);
          return root_checksum(comm, target, 1);
        } else if constexpr (std::is_same_v<Target, std::string>) {
          const auto* bytes =
              reinterpret_cast<const std::uint8_t*>(target->data());
          const Index n = static_cast<Index>(target->size());
          f.write(e.name, Shape{n}, bytes);
          return root_checksum(comm, bytes, n);
        } else if constexpr (std::is_same_v<Target, std::vector<float>> ||
                             std::is_same_v<Target, std::vector<double>>) {
          const Index n = static_cast<Index>(target->size());
          f.write(e.name, Shape{n}, target->data());
          return root_checksum(comm, target->data(), n);
        } else {
          f.write(e.name, *target);
          return checksum(*target);
        }
      },
      e.target);
}

// Reads an entry's dataset and checks it against its checksum and its
// kind in the manifest. With `commit`, the entry's object gets the values:
// a distributed tensor at once, a replicated value by the function added
// to `commit` (run once every entry has read well); without, nothing
// changes.
void read_entry(const H5File& f, const Entry& e,
                std::vector<std::function<void()>>* commit) {
  const std::uint64_t want =
      static_cast<std::uint64_t>(f.int_attribute(e.name, kChecksum));
  const auto check = [&](std::uint64_t got) {
    require(got == want, ErrorKind::kIo, "dataset '", e.name, "' of ", f.path(),
            " does not match its checksum");
  };
  // The dataset's shape before anything is read (or allocated): what the
  // manifest says, or for bytes no more than the file holds.
  const auto expect_shape = [&](const Shape& want_shape) {
    const Shape have = f.shape(e.name);
    require(have == want_shape, ErrorKind::kIo, "dataset '", e.name, "' of ",
            f.path(), " has shape ", have, " where its manifest says ",
            want_shape);
  };
  std::visit(
      [&](auto* target) {
        using Target = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<Target, std::int64_t>) {
          expect_shape(Shape{1});
          const auto v = f.read_array<std::int64_t>(e.name);
          check(checksum(v.data(), Shape{1}));
          if (commit) commit->push_back([target, v] { *target = v[0]; });
        } else if constexpr (std::is_same_v<Target, std::string>) {
          const Shape have = f.shape(e.name);
          std::error_code ec;
          const auto file_bytes = fs::file_size(f.path(), ec);
          require(have.ndims() == 1 && !ec &&
                      static_cast<std::uintmax_t>(have[0]) <= file_bytes,
                  ErrorKind::kIo, "dataset '", e.name, "' of ", f.path(),
                  " has shape ", have, ", not the bytes of a string");
          const auto v = f.read_array<std::uint8_t>(e.name);
          check(checksum(v.data(), Shape{static_cast<Index>(v.size())}));
          if (commit) {
            commit->push_back(
                [target, v] { target->assign(v.begin(), v.end()); });
          }
        } else if constexpr (std::is_same_v<Target, std::vector<float>> ||
                             std::is_same_v<Target, std::vector<double>>) {
          using T = typename Target::value_type;
          expect_shape(Shape{static_cast<Index>(target->size())});
          auto v = std::make_shared<std::vector<T>>(f.read_array<T>(e.name));
          check(checksum(v->data(), Shape{static_cast<Index>(v->size())}));
          if (commit) commit->push_back([target, v] { *target = *v; });
        } else if (commit) {
          f.read(e.name, *target);
          check(checksum(*target));
        } else {
          Target copy(target->grid(), target->layout());
          f.read(e.name, copy);
          check(checksum(copy));
        }
      },
      e.target);
}

// "distconv: I/O error: MESSAGE" -> "MESSAGE".
std::string message_of(const Error& e) {
  const std::string prefix =
      std::string("distconv: ") + to_string(e.kind()) + ": ";
  const std::string what = e.what();
  return what.compare(0, prefix.size(), prefix) == 0
             ? what.substr(prefix.size())
             : what;
}

// The first differences, "; "-separated, and how many more there are.
std::string listed(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 4;
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) {
    out += (i ? "; " : "") + items[i];
  }
  if (items.size() > kShown) {
    out += "; and " + std::to_string(items.size() - kShown) + " more";
  }
  return out;
}

// Runs `fn` on rank 0 only; its Error is thrown on every rank.
template <typename Fn>
void on_root(MPI_Comm comm, int rank, Fn fn) {
  run_collectively(comm, [&] {
    if (rank == 0) fn();
  });
}

void sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  const int code = fd < 0 ? errno : (::fsync(fd) == 0 ? 0 : errno);
  if (fd >= 0) ::close(fd);
  require(code == 0, ErrorKind::kIo, "cannot sync ", path, ": ",
          std::strerror(code));
}

}  // namespace

void CheckpointState::add_entry(const std::string& name, Target target) {
  require(!name.empty() && name[0] != '.' &&
              name.find_first_of("/\t\n") == std::string::npos,
          ErrorKind::kInvalidArgument, "checkpoint entry name '", name,
          "' is empty, starts with '.' or holds a '/', a tab or a line break");
  for (const Entry& e : entries_) {
    require(e.name != name, ErrorKind::kInvalidArgument, "checkpoint entry '",
            name, "' added twice");
  }
  std::visit(
      [&](auto* p) {
        require(p != nullptr, ErrorKind::kInvalidArgument, "checkpoint entry '",
                name, "' points at nothing");
      },
      target);
  entries_.push_back(Entry{name, target});
}

void CheckpointState::describe(const std::string& description) {
  require(description.find('\n') == std::string::npos,
          ErrorKind::kInvalidArgument, "a checkpoint description holds a line ",
          "break: '", description, "'");
  description_ = description;
}

void CheckpointState::add(const std::string& n, std::vector<float>* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, std::vector<double>* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, std::int64_t* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, std::string* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, DistTensor<float>* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, DistTensor<double>* v) {
  add_entry(n, v);
}
void CheckpointState::add(const std::string& n, DistTensor<bf16>* v) {
  add_entry(n, v);
}

CheckpointDir::CheckpointDir(MPI_Comm comm, const std::string& dir,
                             const CheckpointOptions& options)
    : comm_(comm), dir_(dir), options_(options) {
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  run_collectively(comm, [&] {
    require(options.keep >= 1, ErrorKind::kInvalidArgument,
            "CheckpointOptions::keep is ", options.keep, " (at least 1)");
    require(!dir.empty(), ErrorKind::kInvalidArgument,
            "the checkpoint directory is empty");
  });
  on_root(comm, rank_, [&] {
    std::error_code ec;
    fs::create_directories(dir, ec);
    require(!ec && fs::is_directory(dir), ErrorKind::kIo,
            "cannot make the checkpoint directory ", dir, ": ", ec.message());
  });
}

std::string CheckpointDir::path(std::int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld.h5",
                static_cast<long long>(step));
  return dir_ + "/" + name;
}

std::vector<std::int64_t> CheckpointDir::steps() const {
  std::vector<long long> found;
  on_root(comm_, rank_, [&] {
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(dir_, ec)) {
      const std::string name = item.path().filename().string();
      long long step = 0;
      char tail[8] = {0};
      if (std::sscanf(name.c_str(), "step-%lld.h5%7s", &step, tail) == 1 &&
          name == fs::path(path(step)).filename().string()) {
        found.push_back(step);
      }
    }
    require(!ec, ErrorKind::kIo, "cannot list ", dir_, ": ", ec.message());
  });
  long long n = static_cast<long long>(found.size());
  check_mpi(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm_), "MPI_Bcast");
  found.resize(static_cast<std::size_t>(n));
  check_mpi(
      MPI_Bcast(found.data(), static_cast<int>(n), MPI_LONG_LONG, 0, comm_),
      "MPI_Bcast");
  std::sort(found.begin(), found.end());
  return std::vector<std::int64_t>(found.begin(), found.end());
}

namespace {

// What a checkpoint file says it is. With a header (io/internal/
// checkpoint_record.h): its record, and the file checked against it byte
// for byte when `check_data` (before HDF5 reads any of it). A first-format
// file (no header): its record from its datasets, through HDF5. Either
// way the step inside must be the one its name says; Error(kIo) where the
// file is damaged.
CheckpointRecord read_record(MPI_Comm comm, const std::string& path,
                             std::int64_t step, bool check_data) {
  const std::string first = internal::read_prefix(comm, path, 512);
  if (!internal::has_header(first)) {
    // Neither header nor signature: a header damaged, whose file HDF5 must
    // not read unchecked (its metadata may be damaged too, and HDF5 trusts
    // the sizes it finds there).
    require(internal::is_bare_hdf5(first), ErrorKind::kIo, path,
            " begins with neither a checkpoint header nor HDF5's signature "
            "(damaged)");
    const H5File f(comm, path, H5Mode::kRead);
    const std::string format = f.string_attribute("/", "format");
    require(format == kFirstFormat, ErrorKind::kIo, path, " is a '", format,
            "' file, not a ", kFormat);
    const std::int64_t inside = f.int_attribute("/", "step");
    require(inside == step, ErrorKind::kIo, path, " holds step ", inside,
            ", not step ", step, " as its name says");
    return internal::record_of_datasets(f);
  }
  const long long n = internal::header_bytes_of(first, path);
  const internal::CheckpointHeader h = internal::parse_header(
      n == 512 ? first : internal::read_prefix(comm, path, n), path);
  require(h.step == step, ErrorKind::kIo, path, " holds step ", h.step,
          ", not step ", step, " as its name says");
  if (check_data) {
    const long long size = internal::file_size(comm, path);
    require(size == h.file_bytes, ErrorKind::kIo, path, " has ", size,
            " bytes where its header says ", h.file_bytes);
    require(internal::file_hash(comm, path, h.header_bytes, size) ==
                h.data_hash,
            ErrorKind::kIo, path, " does not match its checksum (damaged)");
  }
  return h.record;
}

// Error(kShapeMismatch) naming the differences, if any.
void check_belongs(const CheckpointRecord& file, const CheckpointRecord& run,
                   const std::string& path) {
  const std::vector<std::string> d = internal::differences(file, run);
  if (!d.empty()) {
    throw Error(ErrorKind::kShapeMismatch,
                path + " belongs to another network: " + listed(d));
  }
}

}  // namespace

void CheckpointDir::save(std::int64_t step,
                         const CheckpointState& state) const {
  int ranks = 0;
  check_mpi(MPI_Comm_size(comm_, &ranks), "MPI_Comm_size");
  run_collectively(comm_, [&] {
    for (const Entry& e : state.entries()) {
      std::visit(
          [&](auto* t) {
            using Target = std::remove_pointer_t<decltype(t)>;
            if constexpr (std::is_same_v<Target, DistTensor<float>> ||
                          std::is_same_v<Target, DistTensor<double>> ||
                          std::is_same_v<Target, DistTensor<bf16>>) {
              require(t->grid().size() == ranks, ErrorKind::kGridMismatch,
                      "checkpoint entry '", e.name, "' lives on a grid of ",
                      t->grid().size(), " ranks, the checkpoint on ", ranks);
            }
          },
          e.target);
    }
  });
  // What the directory holds, before anything is written: a checkpoint of
  // another network, or a newer one of this network, stops the save; only
  // this network's are pruned (a damaged one, perhaps a good one read
  // badly, is left).
  const CheckpointRecord ours = internal::record_of(state);
  std::vector<std::int64_t> own;
  for (const std::int64_t s : steps()) {
    std::optional<CheckpointRecord> theirs;
    try {
      theirs = read_record(comm_, path(s), s, /*check_data=*/false);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;
      continue;  // damaged: not read, not removed
    }
    check_belongs(*theirs, ours, path(s));
    if (s != step) own.push_back(s);
  }
  require(own.empty() || own.back() < step, ErrorKind::kState, dir_,
          " already holds ",
          own.empty() ? "" : fs::path(path(own.back())).filename().string(),
          " of this network, after step ", step,
          ": a save there would mix two runs (resume from it, or save "
          "elsewhere)");
  const std::string final_path = path(step), temp = final_path + ".tmp";
  on_root(comm_, rank_, [&] {  // leftovers of an interrupted save
    // (What cannot be removed is left: the save's own writes tell why.)
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(dir_, ec)) {
      if (item.path().extension() == ".tmp") fs::remove(item.path(), ec);
    }
  });
  internal::CheckpointHeader header;
  header.step = step;
  header.header_bytes = internal::header_size(ours);
  header.record = ours;
  {
    H5File f(comm_, temp, H5Mode::kCreateInPlace,
             H5FileOptions{static_cast<std::size_t>(header.header_bytes)});
    f.set_attribute("/", "format", std::string(kFormat));
    f.set_attribute("/", "step", step);
    for (const Entry& e : state.entries()) {
      f.set_attribute(e.name, kChecksum,
                      as_attribute(write_entry(comm_, f, e)));
    }
    f.close();
  }
  // The header, in the space HDF5 left: what the file is, and the hash of
  // every byte after it.
  header.file_bytes = internal::file_size(comm_, temp);
  header.data_hash = internal::file_hash(comm_, temp, header.header_bytes,
                                         header.file_bytes);
  on_root(comm_, rank_, [&] {
    const std::string text = internal::encode_header(header);
    const int fd = ::open(temp.c_str(), O_WRONLY);
    const bool written =
        fd >= 0 && ::pwrite(fd, text.data(), text.size(), 0) ==
                       static_cast<ssize_t>(text.size());
    const int code = errno;
    if (fd >= 0) ::close(fd);
    require(written, ErrorKind::kIo, "cannot write the header of ", temp, ": ",
            std::strerror(code));
  });
  {
    check_belongs(read_record(comm_, temp, step, /*check_data=*/true), ours,
                  temp);
    const H5File f(comm_, temp, H5Mode::kRead);
    for (const Entry& e : state.entries()) read_entry(f, e, nullptr);
  }
  on_root(comm_, rank_, [&] {
    sync_path(temp, O_RDONLY);
    std::error_code ec;
    fs::rename(temp, final_path, ec);
    require(!ec, ErrorKind::kIo, "cannot rename ", temp, " to ", final_path,
            ": ", ec.message());
    sync_path(dir_, O_RDONLY | O_DIRECTORY);
  });
  on_root(comm_, rank_, [&] {
    const std::size_t keep = static_cast<std::size_t>(options_.keep) - 1;
    for (std::size_t i = 0; i + keep < own.size(); ++i) {
      std::error_code ec;
      fs::remove(path(own[i]), ec);
      require(!ec, ErrorKind::kIo, "cannot remove the older checkpoint ",
              path(own[i]), ": ", ec.message());
    }
  });
}

void CheckpointDir::load(std::int64_t step, CheckpointState& state) const {
  // What it belongs to, and that it is whole, before HDF5 reads it.
  check_belongs(read_record(comm_, path(step), step, /*check_data=*/true),
                internal::record_of(state), path(step));
  const H5File f(comm_, path(step), H5Mode::kRead);
  std::vector<std::function<void()>> commit;
  for (const Entry& e : state.entries()) read_entry(f, e, &commit);
  for (const auto& c : commit) c();
}

std::optional<std::int64_t> CheckpointDir::load_latest(
    CheckpointState& state, std::vector<std::string>* skipped) const {
  const std::vector<std::int64_t> all = steps();
  if (all.empty()) return std::nullopt;
  std::vector<std::string> why;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      load(*it, state);
      return *it;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;  // another network's, say
      why.push_back(message_of(e));
      if (skipped) skipped->push_back(e.what());
    }
  }
  throw Error(ErrorKind::kIo,
              "none of the " + std::to_string(all.size()) + " checkpoints in " +
                  dir_ + " loads (a fresh start would overwrite them): " +
                  listed(why));
}

}  // namespace distconv::io
