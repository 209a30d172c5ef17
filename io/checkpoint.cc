#include "io/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "io/checksum.h"
#include "io/h5_file.h"

namespace distconv::io {
namespace {

namespace fs = std::filesystem;
using distconv::internal::check_mpi;
using distconv::internal::run_collectively;
using Entry = CheckpointState::Entry;

constexpr char kFormat[] = "distconv checkpoint 1";
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

// Reads an entry's dataset and checks its checksum; into the entry's
// object when `load`, else into a copy thrown away.
void read_entry(const H5File& f, const Entry& e, bool load) {
  const std::uint64_t want =
      static_cast<std::uint64_t>(f.int_attribute(e.name, kChecksum));
  const auto check = [&](std::uint64_t got) {
    require(got == want, ErrorKind::kIo, "dataset '", e.name, "' of ", f.path(),
            " does not match its checksum");
  };
  std::visit(
      [&](auto* target) {
        using Target = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<Target, std::int64_t>) {
          const auto v = f.read_array<std::int64_t>(e.name);
          require(v.size() == 1, ErrorKind::kIo, "dataset '", e.name, "' of ",
                  f.path(), " is not one integer");
          check(checksum(v.data(), Shape{1}));
          if (load) *target = v[0];
        } else if constexpr (std::is_same_v<Target, std::string>) {
          const auto v = f.read_array<std::uint8_t>(e.name);
          check(checksum(v.data(), Shape{static_cast<Index>(v.size())}));
          if (load) target->assign(v.begin(), v.end());
        } else if constexpr (std::is_same_v<Target, std::vector<float>> ||
                             std::is_same_v<Target, std::vector<double>>) {
          using T = typename Target::value_type;
          auto v = f.read_array<T>(e.name);
          check(checksum(v.data(), Shape{static_cast<Index>(v.size())}));
          if (load) *target = std::move(v);
        } else if (load) {
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
  require(!name.empty() && name.find('/') == std::string::npos,
          ErrorKind::kInvalidArgument, "checkpoint entry name '", name,
          "' is empty or holds a '/'");
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
  const std::string final_path = path(step), temp = final_path + ".tmp";
  on_root(comm_, rank_, [&] {  // leftovers of an interrupted save
    for (const auto& item : fs::directory_iterator(dir_)) {
      if (item.path().extension() == ".tmp") fs::remove(item.path());
    }
  });
  {
    H5File f(comm_, temp, H5Mode::kCreate);
    f.set_attribute("/", "format", std::string(kFormat));
    f.set_attribute("/", "step", step);
    for (const Entry& e : state.entries()) {
      f.set_attribute(e.name, kChecksum,
                      as_attribute(write_entry(comm_, f, e)));
    }
    f.close();
  }
  {
    H5File f(comm_, temp, H5Mode::kRead);
    for (const Entry& e : state.entries()) read_entry(f, e, /*load=*/false);
  }
  on_root(comm_, rank_, [&] {
    sync_path(temp, O_RDONLY);
    std::error_code ec;
    fs::rename(temp, final_path, ec);
    require(!ec, ErrorKind::kIo, "cannot rename ", temp, " to ", final_path,
            ": ", ec.message());
    sync_path(dir_, O_RDONLY | O_DIRECTORY);
  });
  const std::vector<std::int64_t> all = steps();
  on_root(comm_, rank_, [&] {
    const std::size_t keep = static_cast<std::size_t>(options_.keep);
    for (std::size_t i = 0; i + keep < all.size(); ++i)
      fs::remove(path(all[i]));
  });
}

void CheckpointDir::load(std::int64_t step, CheckpointState& state) const {
  const H5File f(comm_, path(step), H5Mode::kRead);
  const std::string format = f.string_attribute("/", "format");
  run_collectively(comm_, [&] {
    require(format == kFormat, ErrorKind::kIo, path(step), " is a '", format,
            "' file, not a ", kFormat);
  });
  for (const Entry& e : state.entries()) read_entry(f, e, /*load=*/true);
}

std::optional<std::int64_t> CheckpointDir::load_latest(
    CheckpointState& state, std::vector<std::string>* skipped) const {
  const std::vector<std::int64_t> all = steps();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      load(*it, state);
      return *it;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kIo) throw;
      if (skipped) skipped->push_back(e.what());
    }
  }
  return std::nullopt;
}

}  // namespace distconv::io
