// Collective .npy I/O through MPI-IO: every rank reads or writes its own
// block of one file, the global array in C order (the file NumPy and
// PyTorch users exchange; numpy.load reads it on one process).
//
//   DistTensor<float> x(grid, layout);             // any grid and halos
//   io::write_npy("x.npy", x);                      // shards in, one file
//   DistTensor<float> y(other_grid, other_layout);  // same global shape
//   io::read_npy("x.npy", y);                       // bitwise x, re-split
//
// A tensor's interior (its shard) is read or written; halos are left
// untouched; any storage order; empty shards take part with nothing to
// move; they stream through the page cache unless told to keep it
// (io/page_cache.h). Arrays replicated on every rank (weights, say) are
// written from rank 0's copy and read whole on every rank.
//
// All functions are collective over the tensor's grid (or `comm`). Every
// failure throws the same Error(kIo) on every rank, naming the file: a
// missing or unreadable file, no permission, a file that is not .npy, an
// element type or global shape other than the tensor's, a file shorter than
// its header says, a full disk. A write that fails removes the file.
#ifndef DISTCONV_IO_NPY_FILE_H_
#define DISTCONV_IO_NPY_FILE_H_

#include <mpi.h>

#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/shape.h"
#include "io/npy_header.h"
#include "io/page_cache.h"

namespace distconv::io {

template <typename T>
void write_npy(const std::string& path, const DistTensor<T>& tensor,
               PageCache page_cache = PageCache::kStream);
template <typename T>
void read_npy(const std::string& path, DistTensor<T>& tensor,
              PageCache page_cache = PageCache::kStream);

// `data` (shape.volume() values, C order) is read on rank 0 of `comm` only.
template <typename T>
void write_npy(MPI_Comm comm, const std::string& path, const Shape& shape,
               const T* data);
// The whole array on every rank; its shape in `*shape` when not null.
template <typename T>
std::vector<T> read_npy(MPI_Comm comm, const std::string& path,
                        Shape* shape = nullptr);

// The file's shape and element type, read by rank 0 and shared (to make a
// tensor of the right shape before reading it).
NpyHeader read_npy_header(MPI_Comm comm, const std::string& path);

}  // namespace distconv::io

#endif  // DISTCONV_IO_NPY_FILE_H_
