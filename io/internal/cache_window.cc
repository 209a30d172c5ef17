#include "io/internal/cache_window.h"

#include <fcntl.h>
#include <unistd.h>

namespace distconv::io::internal {
namespace {

// Waits until the range is on the disk, then drops it from the cache.
void settle(int fd, std::uint64_t offset, std::uint64_t bytes) {
  sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                      SYNC_FILE_RANGE_WAIT_AFTER);
  posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                POSIX_FADV_DONTNEED);
}

}  // namespace

CacheWindow::CacheWindow(const std::string& path, PageCache mode) {
  if (mode == PageCache::kStream) fd_ = open(path.c_str(), O_RDONLY);
}

CacheWindow::~CacheWindow() {
  if (fd_ >= 0) close(fd_);
}

void CacheWindow::moved(Direction direction, std::uint64_t data_offset,
                        std::size_t element_bytes, const Shape& global,
                        const Box& piece) {
  const std::uint64_t offset =
      data_offset + element_bytes * static_cast<std::uint64_t>(
                                        linear_index(piece.lower, global));
  const std::uint64_t bytes =
      element_bytes * static_cast<std::uint64_t>(piece.volume());
  direction == Direction::kWrite ? written(offset, bytes) : read(offset, bytes);
}

void CacheWindow::written(std::uint64_t offset, std::uint64_t bytes) {
  if (fd_ < 0 || bytes == 0) return;
  sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                  SYNC_FILE_RANGE_WRITE);
  if (pending_bytes_) settle(fd_, pending_offset_, pending_bytes_);
  pending_offset_ = offset;
  pending_bytes_ = bytes;
}

void CacheWindow::read(std::uint64_t offset, std::uint64_t bytes) {
  if (fd_ < 0 || bytes == 0) return;
  posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes),
                POSIX_FADV_DONTNEED);
}

void CacheWindow::finish() {
  if (fd_ < 0 || pending_bytes_ == 0) return;
  settle(fd_, pending_offset_, pending_bytes_);
  pending_bytes_ = 0;
}

}  // namespace distconv::io::internal
