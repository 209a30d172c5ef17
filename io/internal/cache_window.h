// Keeps one rank's footprint of a streamed transfer (io/page_cache.h's
// PageCache::kStream) in the page cache to about two pieces: the caller
// reports each piece of the file it has just written or read, in order.
//
//   CacheWindow window(path, PageCache::kStream);
//   for (piece : pieces) { pwrite(piece); window.written(at, bytes); }
//   window.finish();   // every piece written back and out of the cache
//
// Written pieces: the disk is asked to take each one at once
// (sync_file_range), and the one before it is waited for and dropped, so
// the disk works on one piece while the next is copied into the cache.
// Read pieces are dropped at once. Works on its own descriptor of the file
// (the page cache is the file's, whoever opened it), so it goes beside
// MPI-IO and HDF5. Advice only: failures are ignored (the transfer's own
// calls report errors), and with kKeep, or a file it cannot open, it does
// nothing.
#ifndef DISTCONV_IO_INTERNAL_CACHE_WINDOW_H_
#define DISTCONV_IO_INTERNAL_CACHE_WINDOW_H_

#include <cstdint>
#include <string>

#include "io/page_cache.h"

namespace distconv::io::internal {

class CacheWindow {
 public:
  CacheWindow(const std::string& path, PageCache mode);
  ~CacheWindow();
  CacheWindow(const CacheWindow&) = delete;
  CacheWindow& operator=(const CacheWindow&) = delete;

  // `bytes` bytes at file offset `offset` were just written (read).
  void written(std::uint64_t offset, std::uint64_t bytes);
  void read(std::uint64_t offset, std::uint64_t bytes);
  // Waits for the last written piece and drops it (no-op after reads).
  void finish();

 private:
  int fd_ = -1;
  std::uint64_t pending_offset_ = 0, pending_bytes_ = 0;  // written, not yet
                                                          // waited for
};

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_CACHE_WINDOW_H_
