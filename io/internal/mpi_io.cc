#include "io/internal/mpi_io.h"


#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::io::internal {
namespace {

std::string mpi_message(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

int as_int(Index v, const char* what) {
  require(v >= 0 && v <= INT_MAX, ErrorKind::kUnsupported, what, " ", v,
          " is beyond MPI-IO's int counts");
  return static_cast<int>(v);
}

// The innermost dimension in which `box` does not span `global` (0 when
// it spans every one).
int innermost_split(const Shape& global, const Box& box) {
  int k = global.ndims() - 1;
  while (k > 0 && box.extent[k] == global[k]) --k;
  return k;
}

// Calls f(sub) for every index of the dimensions before `j` of `box`, in
// C order; `sub` is `box` one wide in those dimensions.
template <typename F>
void for_each_leading(const Box& box, int j, F&& f) {
  Shape outer = box.extent;
  for (int d = j; d < box.ndims(); ++d) outer[d] = 1;
  const Index count = outer.volume();
  for (Index o = 0; o < count; ++o) {
    Box sub = box;
    Index rest = o;
    for (int d = j - 1; d >= 0; --d) {
      sub.lower[d] = box.lower[d] + rest % outer[d];
      sub.extent[d] = 1;
      rest /= outer[d];
    }
    f(sub);
  }
}

}  // namespace

void agree_on(MPI_Comm comm, int code, const std::string& what) {
  distconv::internal::run_collectively(comm, [&] {
    if (code != MPI_SUCCESS) {
      throw Error(ErrorKind::kIo, what + ": " + mpi_message(code));
    }
  });
}

bool one_run(const Shape& global, const Box& box) {
  int d = 0;
  while (d < global.ndims() && box.extent[d] == 1) ++d;
  for (int e = d + 1; e < global.ndims(); ++e) {
    if (box.extent[e] != global[e]) return false;
  }
  return true;
}

Index run_length(const Shape& global, const Box& box) {
  if (box.empty()) return 0;
  Index length = 1;
  for (int d = innermost_split(global, box); d < global.ndims(); ++d) {
    length *= box.extent[d];
  }
  return length;
}

bool all_long_runs(MPI_Comm comm, const Shape& global, const Box& box,
                   Index min_elements) {
  int long_runs = box.empty() || one_run(global, box) ||
                  run_length(global, box) >= min_elements;
  distconv::internal::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, &long_runs, 1, MPI_INT, MPI_MIN, comm),
      "MPI_Allreduce");
  return long_runs != 0;
}

std::vector<Box> run_pieces(const Shape& global, const Box& box,
                            Index max_elements) {
  std::vector<Box> pieces;
  if (box.empty()) return pieces;
  // One run per index of the dimensions before the innermost split one.
  for_each_leading(box, innermost_split(global, box), [&](const Box& run) {
    // The first dimension j whose cells hold at most max_elements each.
    const int n = run.ndims();
    int j = 0;
    Index inner = run.volume();
    while (j < n - 1 && inner / run.extent[j] > max_elements) {
      inner /= run.extent[j];
      ++j;
    }
    inner /= run.extent[j];  // elements per index of dimension j
    const Index step =
        std::max<Index>(1, max_elements / std::max<Index>(1, inner));
    // Every index of the dimensions before j, then ranges of j.
    for_each_leading(run, j, [&](Box piece) {
      for (Index a = 0; a < run.extent[j]; a += step) {
        piece.lower[j] = run.lower[j] + a;
        piece.extent[j] = std::min(step, run.extent[j] - a);
        pieces.push_back(piece);
      }
    });
  });
  return pieces;
}

OwnedType& OwnedType::operator=(OwnedType&& o) noexcept {
  if (this != &o) {
    OwnedType old(std::exchange(type_, o.release()));
  }
  return *this;
}

OwnedType::~OwnedType() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

MPI_Datatype OwnedType::release() {
  return std::exchange(type_, MPI_DATATYPE_NULL);
}

OwnedType box_type(const Shape& global, const Box& box, MPI_Datatype element) {
  const int n = global.ndims();
  std::vector<int> sizes(n), subsizes(n), starts(n);
  for (int d = 0; d < n; ++d) {
    sizes[d] = as_int(global[d], "global extent");
    subsizes[d] = as_int(box.extent[d], "shard extent");
    starts[d] = as_int(box.lower[d], "shard offset");
  }
  MPI_Datatype t;
  distconv::internal::check_mpi(
      MPI_Type_create_subarray(n, sizes.data(), subsizes.data(), starts.data(),
                               MPI_ORDER_C, element, &t),
      "MPI_Type_create_subarray");
  OwnedType owned(t);
  distconv::internal::check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return owned;
}

OwnedType strided_type(const Shape& extent, const Shape& strides,
                       MPI_Datatype element, int bytes) {
  const int n = extent.ndims();
  // Innermost first; a run of unit stride becomes one contiguous block.
  MPI_Datatype t;
  distconv::internal::check_mpi(MPI_Type_dup(element, &t), "MPI_Type_dup");
  OwnedType inner(t);
  for (int d = n - 1; d >= 0; --d) {
    MPI_Datatype next;
    const int count = as_int(extent[d], "local extent");
    if (d == n - 1 && strides[d] == 1) {
      distconv::internal::check_mpi(
          MPI_Type_contiguous(count, inner.get(), &next),
          "MPI_Type_contiguous");
    } else {
      distconv::internal::check_mpi(
          MPI_Type_create_hvector(count, 1,
                                  static_cast<MPI_Aint>(strides[d]) * bytes,
                                  inner.get(), &next),
          "MPI_Type_create_hvector");
    }
    inner = OwnedType(next);
  }
  t = inner.get();
  distconv::internal::check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return inner;
}

OwnedFile::OwnedFile(MPI_Comm comm, const std::string& path, int amode) {
  const int code =
      MPI_File_open(comm, path.c_str(), amode, MPI_INFO_NULL, &file_);
  const bool writing = (amode & MPI_MODE_RDONLY) == 0;
  if (code != MPI_SUCCESS) file_ = MPI_FILE_NULL;
  agree_on(comm, code,
           "cannot open " + path + (writing ? " for writing" : " for reading"));
}

OwnedFile::~OwnedFile() {
  if (file_ != MPI_FILE_NULL) MPI_File_close(&file_);
}

void OwnedFile::close(MPI_Comm comm, const std::string& path) {
  const int code = MPI_File_close(&file_);
  file_ = MPI_FILE_NULL;
  agree_on(comm, code, "cannot close " + path);
}

}  // namespace distconv::io::internal
