#include "distconv/process_grid.h"

#include <utility>

#include "distconv/error.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"

namespace distconv {

using internal::check_mpi;

namespace {

// Agrees on the grid shape across all ranks before anything else, so that
// every rank reaches the same verdict and throws (or not) together.
void validate_collectively(MPI_Comm comm, const Shape& shape) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  internal::Fingerprint grid("process grid");
  grid.add("shape", shape);
  internal::agree(comm, grid);
  require(shape.ndims() >= 1, ErrorKind::kInvalidArgument,
          "a process grid needs at least one dimension");
  for (Index e : shape) {
    require(e >= 1, ErrorKind::kInvalidArgument, "grid ", shape,
            " must be >= 1 in every dimension");
  }
  // The product of the extents, checked: a huge shape must not wrap
  // around 2^64 to the rank count.
  Index ranks = 1;
  bool overflows = false;
  for (Index e : shape) overflows |= __builtin_mul_overflow(ranks, e, &ranks);
  require(!overflows, ErrorKind::kGridMismatch, "grid ", shape,
          " needs more ranks than 64 bits count (the product of its extents "
          "overflows), communicator has ",
          size);
  require(ranks == size, ErrorKind::kGridMismatch, "grid ", shape, " needs ",
          ranks, " ranks, communicator has ", size);
}

MPI_Comm split(MPI_Comm comm, int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm, color, key, &out), "MPI_Comm_split");
  check_mpi(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
  return out;
}

}  // namespace

ProcessGrid::ProcessGrid(MPI_Comm comm, const Shape& shape) : shape_(shape) {
  require(comm != MPI_COMM_NULL, ErrorKind::kInvalidArgument,
          "the communicator is MPI_COMM_NULL");
  validate_collectively(comm, shape);
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  const Shape me = coord();
  for (int d = 0; d < ndims(); ++d) {
    Shape others = me;
    others[d] = 0;  // color: my coordinate everywhere but d
    along_.push_back(split(comm_,
                           static_cast<int>(linear_index(others, shape_)),
                           static_cast<int>(me[d])));
    slice_.push_back(split(comm_, static_cast<int>(me[d]), rank_));
  }
}

ProcessGrid::~ProcessGrid() { release(); }

ProcessGrid::ProcessGrid(ProcessGrid&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      shape_(other.shape_),
      along_(std::move(other.along_)),
      slice_(std::move(other.slice_)) {
  other.along_.clear();
  other.slice_.clear();
}

ProcessGrid& ProcessGrid::operator=(ProcessGrid&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    shape_ = other.shape_;
    along_ = std::move(other.along_);
    slice_ = std::move(other.slice_);
    other.along_.clear();
    other.slice_.clear();
  }
  return *this;
}

void ProcessGrid::release() noexcept {
  for (MPI_Comm& c : along_) MPI_Comm_free(&c);
  for (MPI_Comm& c : slice_) MPI_Comm_free(&c);
  along_.clear();
  slice_.clear();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Shape ProcessGrid::coord_of(int rank) const {
  require(rank >= 0 && rank < size(), ErrorKind::kInvalidArgument, "rank ",
          rank, " outside grid ", shape_, " of ", size(), " ranks");
  return unravel(rank, shape_);
}

int ProcessGrid::rank_of(const Shape& coord) const {
  require(within(coord, shape_), ErrorKind::kInvalidArgument, "coordinate ",
          coord, " outside grid ", shape_);
  return static_cast<int>(linear_index(coord, shape_));
}

MPI_Comm ProcessGrid::along(int dim) const {
  require(dim >= 0 && dim < ndims(), ErrorKind::kInvalidArgument, "dimension ",
          dim, " outside grid ", shape_);
  return along_[dim];
}

MPI_Comm ProcessGrid::slice(int dim) const {
  require(dim >= 0 && dim < ndims(), ErrorKind::kInvalidArgument, "dimension ",
          dim, " outside grid ", shape_);
  return slice_[dim];
}

}  // namespace distconv
