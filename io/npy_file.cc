#include "io/npy_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "io/internal/cache_window.h"
#include "io/internal/disk_reservation.h"
#include "io/internal/mpi_io.h"

namespace distconv::io {
namespace {

using internal::agree_on;
using internal::CacheWindow;
using internal::Direction;
using internal::OwnedFile;
using internal::OwnedType;

// One rank's part of a transfer: `box` of the global array (global
// coordinates; may be empty), its first element at `first` and the others
// at `strides` (elements) from it.
template <typename T>
struct Block {
  Shape global;
  Box box;
  T* first;
  Shape strides;
};

int rank_of(MPI_Comm comm) {
  int rank = 0;
  distconv::internal::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

// Moves the block's cells. Where every rank's box is made of long runs of
// the file (internal::all_long_runs(): a split along N, or along D, say),
// each rank reads or writes its runs on its own, in pieces of at most
// internal::kPieceBytes each reported to `window`; otherwise through the
// file view of its box with collective I/O, which merges the ranks' short
// runs. Collective either way: errors are agreed.
template <typename T>
void transfer_block(MPI_Comm comm, MPI_File file, std::size_t offset,
                    const Block<T>& b, const std::string& what,
                    Direction direction, CacheWindow& window) {
  const MPI_Datatype element = distconv::internal::mpi_datatype<T>();
  const bool empty = b.box.empty();
  const bool runs = internal::all_long_runs(
      comm, b.global, b.box, internal::kLongRunBytes / sizeof(T));
  OwnedType file_type, memory_type;
  if (!empty && !runs) {
    file_type = internal::box_type(b.global, b.box, element);
    memory_type = internal::strided_type(b.box.extent, b.strides, element,
                                         static_cast<int>(sizeof(T)));
  }
  agree_on(comm,
           MPI_File_set_view(file, static_cast<MPI_Offset>(offset), element,
                             runs || empty ? element : file_type.get(),
                             "native", MPI_INFO_NULL),
           what);
  MPI_Status status;
  int code = MPI_SUCCESS;
  if (runs) {
    // Each piece of the run on its own, from its place in the buffer.
    for (const Box& piece :
         internal::run_pieces(b.global, b.box,
                              internal::kPieceBytes / sizeof(T))) {
      // The piece's first element in the file and in the buffer.
      const MPI_Offset at = linear_index(piece.lower, b.global);
      Index from = 0;
      for (int d = 0; d < b.global.ndims(); ++d) {
        from += (piece.lower[d] - b.box.lower[d]) * b.strides[d];
      }
      const OwnedType piece_type = internal::strided_type(
          piece.extent, b.strides, element, static_cast<int>(sizeof(T)));
      code = direction == Direction::kWrite
                 ? MPI_File_write_at(file, at, b.first + from, 1,
                                     piece_type.get(), &status)
                 : MPI_File_read_at(file, at, b.first + from, 1,
                                    piece_type.get(), &status);
      if (code != MPI_SUCCESS) break;
      window.moved(direction, offset, sizeof(T), b.global, piece);
    }
    if (code == MPI_SUCCESS) window.finish();
  } else {
    const int count = empty ? 0 : 1;
    const MPI_Datatype type = empty ? element : memory_type.get();
    code = direction == Direction::kWrite
               ? MPI_File_write_all(file, b.first, count, type, &status)
               : MPI_File_read_all(file, b.first, count, type, &status);
  }
  agree_on(comm, code, what);
}

// Writes the file as PATH.tmp, in disk space held for all of it first
// (io/internal/disk_reservation.h), and renames it onto PATH once it is
// synced: a failure at any point (a full disk, a quota, no permission)
// leaves PATH as it was and no PATH.tmp.
template <typename T>
void write_block(MPI_Comm comm, const std::string& path, const Block<T>& b,
                 PageCache page_cache) {
  // Large arrays start on a page: writes through the page cache that start
  // mid-page run several times slower.
  const std::size_t data_bytes =
      sizeof(T) * static_cast<std::size_t>(b.global.volume());
  const std::string header = encode_npy_header(
      b.global, element_type<T>(), data_bytes >= (1 << 16) ? 4096 : 64);
  const std::string temp = path + ".tmp";
  const MPI_Offset bytes = static_cast<MPI_Offset>(header.size() + data_bytes);
  const bool root = rank_of(comm) == 0;
  std::optional<internal::DiskReservation> disk;
  try {
    disk.emplace(comm, temp, internal::ReservationOptions{true},
                 "cannot open " + path + " for writing");
    disk->hold(bytes, "cannot write " + path);
    OwnedFile file(comm, temp, MPI_MODE_WRONLY);
    int code = MPI_SUCCESS;
    if (root) {
      MPI_Status status;
      code =
          MPI_File_write_at(file.get(), 0, header.data(),
                            static_cast<int>(header.size()), MPI_BYTE, &status);
    }
    agree_on(comm, code, "cannot write the header of " + path);
    CacheWindow window(temp, page_cache);
    transfer_block(comm, file.get(), header.size(), b, "cannot write " + path,
                   Direction::kWrite, window);
    // Where the disk space could not be held (a file system without
    // fallocate), a write the disk refused can still report success
    // (OMPIO): the file's size after a sync tells.
    agree_on(comm, MPI_File_sync(file.get()), "cannot write " + path);
    MPI_Offset size = 0;
    agree_on(comm, MPI_File_get_size(file.get(), &size),
             "cannot tell the size of " + path);
    require(size == bytes, ErrorKind::kIo, "cannot write ", path, ": ", size,
            " of its ", bytes, " bytes reached the file (disk full?)");
    file.close(comm, temp);
    disk->release();
    distconv::internal::run_collectively(comm, [&] {
      if (root && std::rename(temp.c_str(), path.c_str()) != 0) {
        throw Error(ErrorKind::kIo, "cannot rename " + temp + " to " + path +
                                        ": " + std::strerror(errno));
      }
    });
  } catch (const Error&) {
    // No partial file behind (the open file was closed on the way here).
    if (root) std::remove(temp.c_str());
    throw;
  }
}

// Rank 0 reads and checks the header; every rank returns it.
NpyHeader shared_header(MPI_Comm comm, MPI_File file, const std::string& path) {
  MPI_Offset size = 0;
  agree_on(comm, MPI_File_get_size(file, &size),
           "cannot tell the size of " + path);
  std::string bytes;
  distconv::internal::run_collectively(comm, [&] {
    if (rank_of(comm) != 0) return;
    const auto read = [&](std::size_t n) {
      bytes.resize(static_cast<std::size_t>(
          std::min<MPI_Offset>(static_cast<MPI_Offset>(n), size)));
      MPI_Status status;
      if (MPI_File_read_at(file, 0, bytes.data(),
                           static_cast<int>(bytes.size()), MPI_BYTE,
                           &status) != MPI_SUCCESS) {
        throw Error(ErrorKind::kIo, "cannot read the header of " + path);
      }
    };
    read(kNpyPreambleSize);
    read(npy_header_size(bytes, path));
    const NpyHeader h = parse_npy_header(bytes, path);  // throws if bad
    const MPI_Offset need = static_cast<MPI_Offset>(
        h.data_offset +
        size_of(h.type) * static_cast<std::size_t>(h.shape.volume()));
    require(size >= need, ErrorKind::kIo, path, " is truncated: ", size,
            " bytes where its header needs ", need);
  });
  long long length = static_cast<long long>(bytes.size());
  distconv::internal::check_mpi(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm),
                                "MPI_Bcast");
  bytes.resize(static_cast<std::size_t>(length));
  distconv::internal::check_mpi(
      MPI_Bcast(bytes.data(), static_cast<int>(length), MPI_CHAR, 0, comm),
      "MPI_Bcast");
  return parse_npy_header(bytes, path);
}

template <typename T>
void read_block(MPI_Comm comm, const std::string& path, const Block<T>& b,
                PageCache page_cache) {
  OwnedFile file(comm, path, MPI_MODE_RDONLY);
  const NpyHeader header = shared_header(comm, file.get(), path);
  require(header.type == element_type<T>(), ErrorKind::kIo, path, " holds ",
          to_string(header.type), ", not ", to_string(element_type<T>()));
  require(header.shape == b.global, ErrorKind::kIo, path,
          " holds an array of shape ",
          header.shape.ndims() ? header.shape.to_string() : "()", ", not ",
          b.global);
  CacheWindow window(path, page_cache);
  transfer_block(comm, file.get(), header.data_offset, b, "cannot read " + path,
                 Direction::kRead, window);
  file.close(comm, path);
}

template <typename T>
Block<T> shard_block(const DistTensor<T>& t) {
  const HaloLayout& layout = t.layout();
  const Shape strides = layout.local_strides(t.part());
  const Box interior = layout.interior(t.part());
  Index offset = 0;
  for (int d = 0; d < strides.ndims(); ++d) {
    offset += interior.lower[d] * strides[d];
  }
  T* first = t.size() ? const_cast<T*>(t.data()) + offset : nullptr;
  return Block<T>{t.global_shape(), t.shard(), first, strides};
}

template <typename T>
Block<T> whole_block(const Shape& shape, T* data, bool mine) {
  Box box{Shape::filled(shape.ndims(), 0),
          mine ? shape : Shape::filled(shape.ndims(), 0)};
  return Block<T>{shape, box, data, row_major_strides(shape)};
}

}  // namespace

template <typename T>
void write_npy(const std::string& path, const DistTensor<T>& tensor,
               PageCache page_cache) {
  write_block(tensor.grid().comm(), path, shard_block(tensor), page_cache);
}

template <typename T>
void read_npy(const std::string& path, DistTensor<T>& tensor,
              PageCache page_cache) {
  read_block(tensor.grid().comm(), path, shard_block(tensor), page_cache);
}

template <typename T>
void write_npy(MPI_Comm comm, const std::string& path, const Shape& shape,
               const T* data) {
  const bool root = rank_of(comm) == 0;
  distconv::internal::run_collectively(comm, [&] {
    require(!root || data != nullptr || shape.volume() == 0,
            ErrorKind::kInvalidArgument, "cannot write ", path,
            ": no data for shape ", shape);
  });
  write_block(
      comm, path,
      whole_block(shape, const_cast<T*>(data), root && shape.volume() > 0),
      PageCache::kKeep);
}

template <typename T>
std::vector<T> read_npy(MPI_Comm comm, const std::string& path, Shape* shape) {
  const NpyHeader header = read_npy_header(comm, path);
  std::vector<T> values(static_cast<std::size_t>(header.shape.volume()));
  read_block(comm, path,
             whole_block(header.shape, values.data(), !values.empty()),
             PageCache::kKeep);
  if (shape) *shape = header.shape;
  return values;
}

NpyHeader read_npy_header(MPI_Comm comm, const std::string& path) {
  OwnedFile file(comm, path, MPI_MODE_RDONLY);
  const NpyHeader header = shared_header(comm, file.get(), path);
  file.close(comm, path);
  return header;
}

#define DISTCONV_IO_NPY(T)                                               \
  template void write_npy<T>(const std::string&, const DistTensor<T>&,  \
                             PageCache);                                 \
  template void read_npy<T>(const std::string&, DistTensor<T>&, PageCache); \
  template void write_npy<T>(MPI_Comm, const std::string&, const Shape&, \
                             const T*);                                  \
  template std::vector<T> read_npy<T>(MPI_Comm, const std::string&, Shape*);
DISTCONV_IO_NPY(float)
DISTCONV_IO_NPY(double)
DISTCONV_IO_NPY(std::int64_t)
DISTCONV_IO_NPY(std::uint8_t)
#undef DISTCONV_IO_NPY

}  // namespace distconv::io
