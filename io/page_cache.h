// What a tensor transfer leaves in the operating system's page cache.
//
//   io::write_npy("x.npy", x);                          // kStream (default)
//   io::read_npy("x.npy", y, io::PageCache::kKeep);     // cached for rereads
//
// kStream moves a large file through a few pieces of the page cache at a
// time: each piece written is handed to the disk as soon as it is written
// and dropped from the cache once it is there; each piece read is dropped
// once it is in the tensor. The transfer then runs at the disk's pace
// without filling memory with a copy of the file (and without paying,
// where memory is slow to hand out, for every page of that copy), and a
// write returns with its data written back to the disk (not a full sync:
// file metadata and the disk's own cache are left to the format's sync or
// close). kKeep leaves the pages to the
// kernel, as plain reads and writes do: a file read again soon comes from
// memory.
//
// Streaming applies where each rank's part of the file is made of long
// runs (a split along N, C or D: io/internal/mpi_io.h's all_long_runs())
// of an .npy file or a contiguous HDF5 dataset; other transfers (splits
// of H or W, chunked datasets, windows of a larger dataset) keep their
// pages as with kKeep. It is advice to the kernel (sync_file_range,
// posix_fadvise): a file system that ignores it gets plain I/O.
#ifndef DISTCONV_IO_PAGE_CACHE_H_
#define DISTCONV_IO_PAGE_CACHE_H_

namespace distconv::io {

enum class PageCache {
  kStream,  // written back and dropped piece by piece (the default)
  kKeep,    // left cached, as plain reads and writes do
};

}  // namespace distconv::io

#endif  // DISTCONV_IO_PAGE_CACHE_H_
