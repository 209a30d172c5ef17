#include "io/internal/disk_reservation.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::io::internal {
namespace {

// Free bytes on the disk holding `fd` (root may use the blocks kept back
// for it), or -1.
long long free_bytes(int fd) {
  struct statvfs disk;
  if (fstatvfs(fd, &disk) != 0) return -1;
  return static_cast<long long>(geteuid() == 0 ? disk.f_bfree : disk.f_bavail) *
         static_cast<long long>(disk.f_frsize);
}

[[noreturn]] void no_room(const std::string& what, long long more, int fd,
                          int code) {
  throw Error(ErrorKind::kIo, what + ": it needs " + std::to_string(more) +
                                  " more bytes, the disk has " +
                                  std::to_string(free_bytes(fd)) + " free (" +
                                  std::strerror(code) + ")");
}

}  // namespace

DiskReservation::DiskReservation(MPI_Comm comm, const std::string& path,
                                 const ReservationOptions& options,
                                 const std::string& what)
    : comm_(comm), path_(path) {
  distconv::internal::check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  distconv::internal::run_collectively(comm, [&] {
    if (rank_ != 0) return;
    fd_ = options.create
              ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666)
              : ::open(path.c_str(), O_WRONLY);
    if (fd_ < 0) {
      throw Error(ErrorKind::kIo, what + ": " + std::strerror(errno));
    }
    struct stat file;
    if (::fstat(fd_, &file) == 0) initial_size_ = file.st_size;
  });
  distconv::internal::check_mpi(
      MPI_Bcast(&initial_size_, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
}

DiskReservation::~DiskReservation() {
  if (fd_ >= 0) ::close(fd_);
}

void DiskReservation::hold(long long end, const std::string& what) {
  if (end <= held_) return;  // the same on every rank
  distconv::internal::run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    const long long more = end - held_;
    if (holding_) {
      if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, held_, more) == 0) return;
      const int code = errno;
      if (code != EOPNOTSUPP && code != ENOSYS) no_room(what, more, fd_, code);
      holding_ = false;  // the file system cannot: check instead
    }
    struct stat file;
    if (::fstat(fd_, &file) != 0) {
      throw Error(ErrorKind::kIo, what + ": " + std::strerror(errno));
    }
    const long long has = static_cast<long long>(file.st_blocks) * 512;
    if (end - has > free_bytes(fd_)) no_room(what, end - has, fd_, ENOSPC);
  });
  held_ = end;
}

void DiskReservation::release() {
  if (rank_ != 0 || fd_ < 0 || !holding_) return;
  struct stat file;
  if (::fstat(fd_, &file) != 0 || held_ <= file.st_size) return;
  ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, file.st_size,
              held_ - file.st_size);
}

}  // namespace distconv::io::internal
