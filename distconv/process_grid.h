// ProcessGrid: the caller's MPI communicator arranged as a Cartesian grid
// with one extent per tensor dimension (N, C, [D,] H, W).
//
// The grid duplicates the communicator (so library traffic never mixes with
// the caller's), sets it to return errors instead of aborting, and owns it
// (RAII, move-only). Rank r sits at grid coordinate unravel(r, shape):
// row-major, the last dimension fastest, the same order as
// Distribution::part_index. Construction is collective and validated
// together on all ranks: a grid whose size does not match the communicator,
// or ranks that disagree on the grid, throw the same distconv::Error on every
// rank.
//
//   ProcessGrid grid(MPI_COMM_WORLD, Shape{2, 1, 2, 1});   // 4 ranks
//   grid.coord();            // e.g. {1, 0, 0, 0} on rank 2
//   grid.along(2);           // the 2 ranks that differ only in H
//   grid.sample_comm();      // the 2 ranks sharing this rank's samples
#ifndef DISTCONV_PROCESS_GRID_H_
#define DISTCONV_PROCESS_GRID_H_

#include <mpi.h>

#include <vector>

#include "distconv/shape.h"

namespace distconv {

class ProcessGrid {
 public:
  ProcessGrid(MPI_Comm comm, const Shape& shape);  // collective
  ~ProcessGrid();
  ProcessGrid(ProcessGrid&& other) noexcept;
  ProcessGrid& operator=(ProcessGrid&& other) noexcept;
  ProcessGrid(const ProcessGrid&) = delete;
  ProcessGrid& operator=(const ProcessGrid&) = delete;

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(shape_.volume()); }
  int ndims() const { return shape_.ndims(); }
  const Shape& shape() const { return shape_; }
  Shape coord() const { return coord_of(rank_); }
  Shape coord_of(int rank) const;
  int rank_of(const Shape& coord) const;

  // Ranks that differ from this one only in dimension `dim`, ordered by
  // their coordinate there (rank in the result == coordinate).
  MPI_Comm along(int dim) const;
  // Ranks that share this rank's coordinate in dimension `dim` (all other
  // dimensions vary), ordered as in comm().
  MPI_Comm slice(int dim) const;
  // Ranks holding the same samples as this one: slice(0).
  MPI_Comm sample_comm() const { return slice(0); }

 private:
  void release() noexcept;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  Shape shape_;
  std::vector<MPI_Comm> along_;
  std::vector<MPI_Comm> slice_;
};

}  // namespace distconv

#endif  // DISTCONV_PROCESS_GRID_H_
