#include "io/internal/h5_file_state.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::io {

using internal::check_h5;
using internal::checked;
using internal::Hid;
using internal::QuietErrors;

namespace {

// Room held for the metadata of an empty file (superblock, root group,
// HDF5's aggregation blocks), and for each object's (object header, its
// link in the root group's heap and B-tree), beside its name and value.
constexpr long long kMetadataMargin = 64 << 10;
constexpr long long kObjectMetadata = 2 << 10;
// H5File's alignment of data of 64 KiB and more (H5Pset_alignment).
constexpr long long kAlignThreshold = 64 << 10, kAlignment = 4096;

bool creates(H5Mode mode) {
  return mode == H5Mode::kCreate || mode == H5Mode::kCreateInPlace;
}

}  // namespace

namespace internal {

long long storage_bytes(const Shape& shape, std::size_t element_bytes,
                        const Shape& chunk) {
  const auto aligned = [](long long bytes) {
    return bytes + (bytes >= kAlignThreshold ? kAlignment : 0);
  };
  const long long e = static_cast<long long>(element_bytes);
  if (chunk.ndims() == 0) return aligned(shape.volume() * e);
  long long chunks = 1, chunk_bytes = e;
  for (int d = 0; d < shape.ndims(); ++d) {
    const Index c = std::max<Index>(1, std::min(chunk[d], shape[d]));
    chunks *= (shape[d] + c - 1) / c;
    chunk_bytes *= c;
  }
  // (and an entry of the chunk index each)
  return chunks * (aligned(chunk_bytes) + 64);
}

}  // namespace internal

void H5File::State::agree(const std::function<void()>& step) const {
  QuietErrors quiet;
  distconv::internal::run_collectively(comm, step);
}

void H5File::State::open_file() {
  written = mode == H5Mode::kCreate ? path + ".tmp" : path;
  agree([&] {
    const long long u = user_block;
    require(u == 0 || (creates(mode) && u >= 512 && (u & (u - 1)) == 0),
            ErrorKind::kInvalidArgument, "a user block of ", u, " bytes for ",
            path, " (0, or a power of 2 from 512 in a new file)");
  });
  if (creates(mode)) {
    // Held before HDF5 writes anything: the superblock and root group's
    // metadata, which every close writes, fit.
    disk.emplace(comm, written, internal::ReservationOptions{true},
                 "cannot create " + path);
    disk->hold(kMetadataMargin + user_block, "cannot create " + path);
  }
  agree([&] {
    Hid fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose,
                       "cannot make a file access property list");
    check_h5(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL),
             "cannot use MPI-IO for " + path);
    // Data of 64 KiB and more starts on a 4 KiB boundary: writes through
    // the page cache that start mid-page run several times slower.
    check_h5(H5Pset_alignment(fapl.get(), kAlignThreshold, kAlignment),
             "cannot align the data of " + path);
    if (creates(mode)) {
      // (The file is empty: HDF5 truncates nothing, the blocks stay held.)
      const Hid fcpl = checked(H5Pcreate(H5P_FILE_CREATE), H5Pclose,
                               "cannot make a file creation property list");
      if (user_block > 0) {
        check_h5(H5Pset_userblock(fcpl.get(), static_cast<hsize_t>(user_block)),
                 "cannot leave a user block in " + path);
      }
      file = checked(
          H5Fcreate(written.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()),
          H5Fclose, "cannot create " + path);
    } else {
      file =
          checked(H5Fopen(path.c_str(),
                          mode == H5Mode::kRead ? H5F_ACC_RDONLY : H5F_ACC_RDWR,
                          fapl.get()),
                  H5Fclose, "cannot open " + path);
    }
  });
  metadata = kMetadataMargin + user_block;
  if (mode == H5Mode::kReadWrite) {
    disk.emplace(comm, path, internal::ReservationOptions{false},
                 "cannot open " + path);
    data_end = disk->initial_size();  // (an existing file's end)
  }
  hold(0, "cannot write " + path);
}

void H5File::State::hold(long long extra, const std::string& what) {
  if (disk) disk->hold(data_end + metadata + extra, what);
}

void H5File::State::before_object(long long bytes, long long storage,
                                  const std::string& what) {
  hold(kObjectMetadata + bytes + storage, what);
}

void H5File::State::after_object(long long bytes, hid_t dset,
                                 const std::string& what) {
  metadata += kObjectMetadata + bytes;
  if (dset >= 0) {
    haddr_t end = 0;
    agree([&] { end = end_of_storage(dset, what); });
    data_end = std::max(data_end, static_cast<long long>(end));
  }
  hold(0, what);
}

void H5File::State::close() {
  agree([&] { check_h5(file.reset(), "cannot write and close " + path); });
  if (disk) disk->release();
  if (mode == H5Mode::kCreate) {
    agree([&] {
      if (rank != 0) return;
      require(std::rename(written.c_str(), path.c_str()) == 0, ErrorKind::kIo,
              "cannot rename ", written, " to ", path, ": ",
              std::strerror(errno));
    });
  }
  closed_well = true;
}

H5File::State::~State() {
  if (file.valid()) file.reset();  // collective; errors go unreported
  if (disk) disk->release();
  disk.reset();
  if (creates(mode) && !closed_well && rank == 0) ::unlink(written.c_str());
}

Hid H5File::State::open(const std::string& dataset) const {
  QuietErrors quiet;
  require(H5Lexists(file.get(), dataset.c_str(), H5P_DEFAULT) > 0,
          ErrorKind::kIo, path, " has no dataset '", dataset, "'");
  return checked(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose,
                 "cannot open " + name(dataset));
}

Hid H5File::State::space_of(const Hid& dset, const std::string& dataset) const {
  return checked(H5Dget_space(dset.get()), H5Sclose,
                 "cannot read the shape of " + name(dataset));
}

std::uintmax_t H5File::State::file_bytes() const {
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(written, ec);
  return ec ? 0 : bytes;
}

void H5File::State::check_fits(hid_t dset, hid_t stored, const Shape& shape,
                               const std::string& name) const {
  const haddr_t offset = H5Dget_offset(dset);
  if (offset == HADDR_UNDEF) return;  // chunked or compact: HDF5 checks
  const unsigned long long storage = H5Dget_storage_size(dset);
  const unsigned long long want =
      static_cast<unsigned long long>(shape.volume()) * H5Tget_size(stored);
  require(storage == want && offset + storage <= file_bytes(), ErrorKind::kIo,
          name, " of shape ", shape, " says its ", storage,
          " bytes of data lie at byte ", offset, " of a file of ", file_bytes(),
          " (a damaged file)");
}

haddr_t H5File::State::end_of_storage(hid_t dset, const std::string& what) {
  const haddr_t offset = H5Dget_offset(dset);
  if (offset != HADDR_UNDEF) return offset + H5Dget_storage_size(dset);
  hsize_t chunks = 0;
  const Hid space = checked(H5Dget_space(dset), H5Sclose, what);
  check_h5(H5Dget_num_chunks(dset, space.get(), &chunks), what);
  haddr_t end = 0;
  for (hsize_t i = 0; i < chunks; ++i) {
    haddr_t address = 0;
    hsize_t size = 0;
    unsigned filter = 0;
    check_h5(H5Dget_chunk_info(dset, space.get(), i, nullptr, &filter, &address,
                               &size),
             what);
    end = std::max<haddr_t>(end, address + size);
  }
  return end;
}

}  // namespace distconv::io
