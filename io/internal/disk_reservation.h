// Internal: disk space held for a file while the ranks write it, so that a
// full disk or a quota fails where every rank learns it together, before
// the bytes that need the space are written, and never inside a write or
// a collective close that some ranks finish and others do not.
//
//   DiskReservation r(comm, "x.h5.tmp", ReservationOptions{true},
//                     "cannot create x.h5");
//   r.hold(64 << 10);       // the file's first 64 KiB held on disk
//   ...                     // HDF5 or MPI-IO writes inside them
//   r.hold(end_of_data);    // Error(kIo) on every rank if the disk is full
//   r.release();            // after closing: blocks past the file's end
//
// Rank 0 holds the blocks with fallocate(FALLOC_FL_KEEP_SIZE): the file's
// size does not change, its blocks up to the end held exist, and writes
// inside them need no more space (ext4, XFS, btrfs, tmpfs; a quota counts
// them). Where the file system cannot (EOPNOTSUPP: some network file
// systems), hold() checks the free space instead (statvfs): a check, not a
// reservation, which others can fill before the bytes are written.
#ifndef DISTCONV_IO_INTERNAL_DISK_RESERVATION_H_
#define DISTCONV_IO_INTERNAL_DISK_RESERVATION_H_

#include <mpi.h>

#include <string>

namespace distconv::io::internal {

struct ReservationOptions {
  // Create the file empty, replacing any file there (else the file must
  // exist, and keeps what it holds).
  bool create = false;
};

class DiskReservation {
 public:
  // Collective; Error(kIo, what + ...) on every rank when rank 0 cannot
  // open (or create) `path`.
  DiskReservation(MPI_Comm comm, const std::string& path,
                  const ReservationOptions& options, const std::string& what);
  ~DiskReservation();
  DiskReservation(const DiskReservation&) = delete;
  DiskReservation& operator=(const DiskReservation&) = delete;

  // Collective: holds the file's first `end` bytes on disk (nothing to do
  // for what is held already); Error(kIo, what + ": cannot hold N more
  // bytes on the disk: No space left on device") on every rank if the
  // disk (or a quota) has no room.
  void hold(long long end, const std::string& what);
  // Once the file is closed (rank 0 alone, no communication): gives back
  // the blocks held past its end. Errors are ignored (what is given back
  // is only space).
  void release();
  // The file's size when it was opened (0 when created), on every rank.
  long long initial_size() const { return initial_size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::string path_;
  int fd_ = -1;         // rank 0's
  long long held_ = 0;  // bytes from the file's start held (or checked)
  long long initial_size_ = 0;
  bool holding_ = true;  // rank 0's: false where the file system cannot
};

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_DISK_RESERVATION_H_
