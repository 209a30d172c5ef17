// Internal: what an H5File holds (io/h5_file.h) and its life: opening or
// creating the file, the disk space held for a file being written
// (io/internal/disk_reservation.h), closing, and what happens to a file
// that was never closed well.
//
// Space is held ahead of HDF5: when a file is created (before HDF5 writes
// anything), before a dataset or attribute is made (its storage, as
// predicted, and room for its metadata), and after (the end of every
// dataset's storage, and room for all the metadata made so far). Parallel
// HDF5 allocates a dataset's storage when it makes it, and the file's end
// of allocation lies at most the metadata made beyond the last storage's
// end, so every byte written later, data and metadata, lands inside blocks
// held: a full disk or a quota fails at a hold, on every rank together,
// while the metadata that the close will write still fits, and the close
// (collective, with HDF5's barriers inside) cannot fail half way on some
// ranks. (HDF5 tells the end of allocation only through H5Fget_eoa, which
// refuses the MPI-IO driver: H5File bounds it from above instead, with
// room for each object's metadata: kObjectMetadata, its name and value.)
#ifndef DISTCONV_IO_INTERNAL_H5_FILE_STATE_H_
#define DISTCONV_IO_INTERNAL_H5_FILE_STATE_H_

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "io/h5_file.h"
#include "io/internal/disk_reservation.h"
#include "io/internal/h5_util.h"

namespace distconv::io {

struct H5File::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::string path;     // as the caller named it
  std::string written;  // where it is written (kCreate: path + ".tmp")
  H5Mode mode = H5Mode::kRead;
  long long user_block = 0;  // H5FileOptions::user_block
  internal::Hid file;
  std::optional<internal::DiskReservation> disk;  // the writing modes'
  bool closed_well = false;
  // A bound on the file's end of allocation: the end of the datasets'
  // storage, and room for the metadata made.
  long long data_end = 0;
  long long metadata = 0;

  State() = default;
  // Closes a file close() did not (collective; errors unreported) and
  // removes a created file that was not closed well.
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Collective: opens or creates the file.
  void open_file();
  // Collective: H5Fclose, then kCreate's rename onto `path`.
  void close();

  // Runs `step` on every rank; an Error on any rank is thrown on all.
  void agree(const std::function<void()>& step) const;
  // Collective: holds the bound on the file's end of allocation plus
  // `extra` bytes (writing modes; nothing in kRead).
  void hold(long long extra, const std::string& what);
  // Collective: before an object (a dataset or attribute) of `bytes` of
  // name and value is made: holds room for it and its `storage`.
  void before_object(long long bytes, long long storage,
                     const std::string& what);
  // Collective: after it is made: counts its metadata and `dset`'s
  // storage (if a dataset), and holds the new bound.
  void after_object(long long bytes, hid_t dset, const std::string& what);

  std::string name(const std::string& dataset) const {
    return "dataset '" + dataset + "' of " + path;
  }
  internal::Hid open(const std::string& dataset) const;
  internal::Hid space_of(const internal::Hid& dset,
                         const std::string& dataset) const;
  // The file offset just past a dataset's data (contiguous or chunked).
  static haddr_t end_of_storage(hid_t dset, const std::string& what);
  // The file's size on disk now.
  std::uintmax_t file_bytes() const;
  // Before a replicated array of `shape` is allocated and read: a
  // contiguous dataset's storage must be that many elements of `stored`
  // and lie inside the file (a damaged file can claim any size).
  void check_fits(hid_t dset, hid_t stored, const Shape& shape,
                  const std::string& name) const;
};

namespace internal {

// The bytes a new dataset's storage takes (contiguous, or the chunks it
// is cut into), with the alignment H5File asks for.
long long storage_bytes(const Shape& shape, std::size_t element_bytes,
                        const Shape& chunk);

}  // namespace internal
}  // namespace distconv::io

#endif  // DISTCONV_IO_INTERNAL_H5_FILE_STATE_H_
