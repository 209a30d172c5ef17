#include "tests/small_disk.h"

#include <fcntl.h>
#include <mpi.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "tests/mpi_testing.h"

namespace distconv::testing {

SmallDisk::SmallDisk(const std::string& name, long long bytes)
    : dir_(temp_path(name)) {
  int ok = 0;
  if (world_rank() == 0) {
    mkdir(dir_.c_str(), 0755);
    const std::string size = "size=" + std::to_string(bytes);
    ok = mount("tmpfs", dir_.c_str(), "tmpfs", 0, size.c_str()) == 0;
    if (!ok) error_ = std::strerror(errno);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mounted_ = ok != 0;
}

SmallDisk::~SmallDisk() {
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0 && mounted_) umount2(dir_.c_str(), MNT_DETACH);
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string SmallDisk::why_not() const {
  return "cannot mount a tmpfs at " + dir_ + " here (" +
         (error_.empty() ? std::string("see rank 0") : error_) +
         "; it needs root): the full-disk cases did not run";
}

void SmallDisk::leave_free(long long bytes) {
  if (world_rank() == 0) {
    const std::string filler = dir_ + "/filler";
    unlink(filler.c_str());
    struct statvfs disk;
    statvfs(dir_.c_str(), &disk);
    const long long free_now =
        static_cast<long long>(disk.f_bfree) * disk.f_frsize;
    if (free_now > bytes) {
      const int fd = open(filler.c_str(), O_WRONLY | O_CREAT, 0644);
      std::vector<char> zeros(static_cast<std::size_t>(free_now - bytes));
      const ssize_t written = write(fd, zeros.data(), zeros.size());
      (void)written;
      close(fd);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace distconv::testing
