// Internal MPI-IO helpers of the .npy reader and writer: owned handles,
// datatypes for a box of a global array and for a strided local block, and
// turning an MPI return code into the same Error(kIo) on every rank.
#ifndef DISTCONV_IO_INTERNAL_MPI_IO_H_
#define DISTCONV_IO_INTERNAL_MPI_IO_H_

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "distconv/box.h"
#include "distconv/shape.h"

namespace distconv::io::internal {

// Collective: throws Error(kIo, "<what>: <MPI's message>") on every rank
// when `code` is not MPI_SUCCESS on some rank (the lowest one's message).
void agree_on(MPI_Comm comm, int code, const std::string& what);

// Whether `box` is one run of the C-order array of `global`: whole in every
// dimension after the first one it splits, one wide before it (a split
// along N, or along D of one sample and channel, say).
bool one_run(const Shape& global, const Box& box);
// The elements of each of the runs `box` is made of in the C-order array
// of `global`: its extents from its innermost split dimension on
// multiplied (its volume when it is one run; 0 when empty). A split along
// D of C channels: C runs of a slab each.
Index run_length(const Shape& global, const Box& box);
// Collective: whether every rank's `box` is empty or made of runs of at
// least `min_elements` each: then each rank moving its own runs beats
// merging the ranks' pieces into a collective transfer.
bool all_long_runs(MPI_Comm comm, const Shape& global, const Box& box,
                   Index min_elements);

// The largest single read or write of a run (run_pieces()), and the
// shortest runs worth moving on their own (all_long_runs()).
constexpr std::size_t kPieceBytes = 16 << 20;
constexpr std::size_t kLongRunBytes = 256 << 10;

// `box` cut into runs of the C-order array of `global` of at most
// `max_elements` each (at least one element of the last dimension), in
// file order. Large transfers go in such pieces: one write call of
// hundreds of MiB through the page cache runs several times slower than
// the same bytes in pieces of a few MiB, and pieces can be streamed
// (io/page_cache.h).
std::vector<Box> run_pieces(const Shape& global, const Box& box,
                            Index max_elements);

// An MPI datatype freed on destruction (MPI_DATATYPE_NULL: none).
class OwnedType {
 public:
  OwnedType() = default;
  explicit OwnedType(MPI_Datatype type) : type_(type) {}
  OwnedType(OwnedType&& o) noexcept : type_(o.release()) {}
  OwnedType& operator=(OwnedType&& o) noexcept;
  ~OwnedType();
  MPI_Datatype get() const { return type_; }
  MPI_Datatype release();

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// The cells of `box` (non-empty) inside a C-order array of `global`
// elements of `element` (MPI_Type_create_subarray, committed).
OwnedType box_type(const Shape& global, const Box& box, MPI_Datatype element);
// `extent` elements at `strides` (in elements of `bytes` each) from the
// first, visited in C order of `extent` (nested vectors, committed).
OwnedType strided_type(const Shape& extent, const Shape& strides,
                       MPI_Datatype element, int bytes);

// An open MPI file, closed (collectively) on destruction.
class OwnedFile {
 public:
  // Collective open; throws the same Error(kIo) on every rank on failure.
  OwnedFile(MPI_Comm comm, const std::string& path, int amode);
  ~OwnedFile();
  OwnedFile(const OwnedFile&) = delete;
  OwnedFile& operator=(const OwnedFile&) = delete;
  MPI_File get() const { return file_; }
  // Collective close; errors are agreed and thrown.
  void close(MPI_Comm comm, const std::string& path);

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_MPI_IO_H_
