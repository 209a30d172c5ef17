// A parallel HDF5 file, opened collectively over a communicator: each rank
// reads and writes its own hyperslab of a dataset holding the global tensor
// in N, C, [D,] H, W order (the order h5py and other tools read).
//
//   io::H5File f(grid.comm(), "tensors.h5", io::H5Mode::kCreate);
//   f.write("x", x);                        // x: DistTensor<float>, any grid
//   f.write("w", Shape{16, 8, 3, 3}, w);    // replicated: rank 0's values
//   f.close();
//   io::H5File g(other_grid.comm(), "tensors.h5", io::H5Mode::kRead);
//   g.read("x", y);                         // y: same global shape, re-split
//   std::vector<float> w2 = g.read_array<float>("w");
//
// A tensor's interior is moved; halos are left untouched; empty shards take
// part with nothing to move. Shards stored channels-last are copied through
// a channels-first buffer (the file's order); channels-first ones go
// straight from and to the tensor's buffer. Tensor datasets carry the
// attribute "distconv_order" ("NCHW" or "NCDHW"); a tensor is read from a
// dataset whose attribute says otherwise ("NHWC") not at all, and from one
// without it as written N, C, [D,] H, W. A dataset larger than the tensor
// is read only as H5ReadOptions::window says (a batch of samples, a box).
//
// Every call is collective over the file's communicator, and every failure
// throws the same Error(kIo) on every rank, naming the file (and dataset):
// a missing file or dataset, no permission, a file that is not HDF5, a
// dataset of another element type or shape, a truncated file, a full disk.
//
// A full disk (or a quota) fails before the bytes that need the space are
// written: the writing modes hold disk space ahead of HDF5 (the file's
// storage as each dataset or attribute is made, and a margin for the
// metadata; io/internal/h5_file_state.h), so that every rank learns it
// together and the file can still be closed; the file being created is
// then removed, and any file it was to replace is left as it was.
#ifndef DISTCONV_IO_H5_FILE_H_
#define DISTCONV_IO_H5_FILE_H_

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/pimpl.h"
#include "distconv/shape.h"
#include "io/element_type.h"
#include "io/page_cache.h"

namespace distconv::io {

enum class H5Mode {
  kRead,       // an existing file, read only
  kReadWrite,  // an existing file
  // A new file, replacing any file there once close() succeeds: until
  // then it is written as PATH.tmp, which is removed if the writing fails
  // (or the H5File goes without close()), leaving PATH as it was.
  kCreate,
  // A new file written at PATH itself, replacing any file there at once,
  // removed if the writing fails: for callers that write to a temporary
  // name and rename it themselves (checkpoints).
  kCreateInPlace,
};

struct H5FileOptions {
  // Bytes at the start of a new file that HDF5 leaves to the caller (its
  // "user block"): 0, or a power of 2 from 512. HDF5 writes nothing there;
  // h5py and other readers skip it.
  std::size_t user_block = 0;
};

struct H5DatasetOptions {
  // Chunk extents of a new dataset (one per dimension); empty: contiguous,
  // the fastest for whole-tensor collective I/O. Chunks of one sample suit
  // readers that take a few samples at a time.
  Shape chunk;
  // What the write leaves in the page cache (io/page_cache.h).
  PageCache page_cache = PageCache::kStream;
};

// Which datasets a tensor is read from (H5ReadOptions::window): never a
// larger one unless asked.
enum class H5Window {
  kWhole,    // a dataset of the tensor's shape (offset 0)
  kSamples,  // a batch of samples: the dataset may hold more samples
             // (dimension 0, from offset[0] on); its other extents are the
             // tensor's
  kBox,      // any box of a larger dataset, at `offset`
};

struct H5ReadOptions {
  // Where the tensor's global box starts in the dataset (one entry per
  // dimension; empty: at 0).
  Shape offset;
  // What the read leaves in the page cache (io/page_cache.h).
  PageCache page_cache = PageCache::kStream;
  H5Window window = H5Window::kWhole;
};

class H5File {
 public:
  // Collective. The file is closed on destruction if close() was not
  // called (collectively; errors then go unreported), and a file created
  // there is removed.
  H5File(MPI_Comm comm, const std::string& path, H5Mode mode,
         const H5FileOptions& options = {});

  // Collective; throws the same Error(kIo) on every rank if HDF5 cannot
  // flush and close the file (a created file is then removed). kCreate:
  // the file is then renamed into place.
  void close();
  const std::string& path() const;

  bool contains(const std::string& dataset) const;
  Shape shape(const std::string& dataset) const;
  ElementType type(const std::string& dataset) const;
  std::vector<std::string> datasets() const;  // the root group's, sorted

  // A new dataset of the tensor's global shape (or an existing one of the
  // same shape and type), written from every rank's shard.
  template <typename T>
  void write(const std::string& dataset, const DistTensor<T>& tensor,
             const H5DatasetOptions& options = {});
  template <typename T>
  void read(const std::string& dataset, DistTensor<T>& tensor,
            const H5ReadOptions& options = {}) const;

  // Each rank's own box of a dataset (any box inside it, or an empty one),
  // in C order of the box, converted to T by HDF5 from whatever integer or
  // floating-point type the dataset stores: for files in other layouts
  // (one sample per file, channels last, 16-bit counts), which the caller
  // rearranges.
  template <typename T>
  std::vector<T> read_box(const std::string& dataset, const Box& box) const;

  // Arrays replicated on every rank: written from rank 0's `data`, read
  // whole on every rank.
  template <typename T>
  void write(const std::string& dataset, const Shape& shape, const T* data);
  template <typename T>
  std::vector<T> read_array(const std::string& dataset) const;

  // Attributes of a dataset ("/": the file): the same value on every rank.
  void set_attribute(const std::string& object, const std::string& key,
                     std::int64_t value);
  void set_attribute(const std::string& object, const std::string& key,
                     const std::string& value);
  std::int64_t int_attribute(const std::string& object,
                             const std::string& key) const;
  std::string string_attribute(const std::string& object,
                               const std::string& key) const;

 private:
  struct State;
  distconv::internal::Pimpl<State> state_;
};

}  // namespace distconv::io

#endif  // DISTCONV_IO_H5_FILE_H_
