// Keeps one rank's footprint of a streamed transfer (io/page_cache.h's
// PageCache::kStream) in the page cache to about two pieces: the caller
// reports each piece of the file it has just written or read, in order.
//
//   CacheWindow window(path, PageCache::kStream);
//   for (piece : pieces) {
//     pwrite(piece);
//     window.moved(Direction::kWrite, data_offset, sizeof(T), global, piece);
//   }
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

#include <cstddef>
#include <cstdint>
#include <string>

#include "distconv/box.h"
#include "distconv/shape.h"
#include "io/page_cache.h"

namespace distconv::io::internal {

enum class Direction { kRead, kWrite };

class CacheWindow {
 public:
  CacheWindow(const std::string& path, PageCache mode);
  ~CacheWindow();
  CacheWindow(const CacheWindow&) = delete;
  CacheWindow& operator=(const CacheWindow&) = delete;

  // `piece` (one run) of a C-order array of `global` elements of
  // `element_bytes` each, stored from file offset `data_offset`, was just
  // written or read.
  void moved(Direction direction, std::uint64_t data_offset,
             std::size_t element_bytes, const Shape& global, const Box& piece);
  // Waits for the last written piece and drops it (no-op after reads).
  void finish();

 private:
  void written(std::uint64_t offset, std::uint64_t bytes);
  void read(std::uint64_t offset, std::uint64_t bytes);

  int fd_ = -1;
  std::uint64_t pending_offset_ = 0, pending_bytes_ = 0;  // written, not yet
                                                          // waited for
};

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_CACHE_WINDOW_H_
