// Internal: how H5File moves a shard between memory and a dataset
// (dataspaces, selections, transfer modes), shared by its tensor reads and
// writes.
#ifndef DISTCONV_IO_INTERNAL_H5_TRANSFER_H_
#define DISTCONV_IO_INTERNAL_H5_TRANSFER_H_

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "io/internal/cache_window.h"
#include "io/internal/h5_util.h"
#include "io/internal/mpi_io.h"

namespace distconv::io::internal {

// The extents of a simple dataspace.
Shape dims_of(hid_t space);
// A simple dataspace of `shape` (scalar for no dimensions).
Hid simple_space(const Shape& shape);
// Selects `box` of `space` (nothing when the box is empty).
void select(hid_t space, const Box& box);
// A transfer property list: H5FD_MPIO_COLLECTIVE for replicated arrays
// and shards of short runs (HDF5 merges the ranks' pieces);
// H5FD_MPIO_INDEPENDENT where every rank's shard is made of long runs of
// the dataset, which merging across ranks would only slow.
Hid transfer(H5FD_mpio_xfer_t mode);

// A tensor's shard as HDF5 sees it: the buffer it moves through (the
// tensor's own, or a channels-first copy) and the box of it to move.
template <typename T>
struct ShardMemory {
  ShardMemory(const DistTensor<T>& t, bool fill) {
    const Shape local = t.local_shape();
    const Box interior = t.layout().interior(t.part());
    direct = t.layout().local_strides(t.part()) == row_major_strides(local);
    if (direct) {
      dims = local;
      box = interior;
      data = const_cast<T*>(t.data());
      return;
    }
    dims = interior.extent;
    box = Box{Shape::filled(dims.ndims(), 0), dims};
    copy.resize(static_cast<std::size_t>(dims.volume()));
    data = copy.data();
    if (fill) {
      t.interior().for_each([&](const Shape& i, const T& v) {
        copy[static_cast<std::size_t>(linear_index(i, dims))] = v;
      });
    }
  }
  // Copies a channels-first read into the tensor.
  void unpack(DistTensor<T>& t) const {
    if (direct) return;
    t.interior().for_each([&](const Shape& i, T& v) {
      v = copy[static_cast<std::size_t>(linear_index(i, dims))];
    });
  }

  bool direct = false;
  Shape dims;
  Box box;
  T* data = nullptr;
  std::vector<T> copy;
};

// Selects `box` of `space` (of shape `dims`) and `memory_box` of a memory
// dataspace of `memory_dims`, and moves the cells.
template <typename T>
void move_box(hid_t dset, hid_t file_space, const Box& box,
              const Shape& memory_dims, const Box& memory_box, T* data,
              hid_t dxpl, Direction direction, const std::string& what) {
  select(file_space, box);
  const Hid memory_space = simple_space(memory_dims);
  select(memory_space.get(), memory_box);
  const Hid type = h5_memory_type(element_type<T>());
  const hid_t t = type.get();
  check_h5(direction == Direction::kWrite
               ? H5Dwrite(dset, t, memory_space.get(), file_space, dxpl, data)
               : H5Dread(dset, t, memory_space.get(), file_space, dxpl, data),
           what);
}

// Moves `box` of `dset` to or from a shard's memory.
// Where every rank's box is made of long runs of the dataset (`runs`:
// all_long_runs()), each rank moves its runs on its own in
// pieces (run_pieces()), each reported to `window` where the
// dataset is contiguous (its file offset is known); otherwise in one
// collective transfer. Collective; call where errors are agreed
// (H5File::State::agree()).
template <typename T>
void move_shard(hid_t dset, const Box& box, const ShardMemory<T>& memory,
                bool runs, Direction direction, CacheWindow& window,
                const std::string& what) {
  const Hid file_space =
      checked(H5Dget_space(dset), H5Sclose, "cannot read the shape of " + what);
  if (!runs) {
    move_box(dset, file_space.get(), box, memory.dims, memory.box, memory.data,
             transfer(H5FD_MPIO_COLLECTIVE).get(), direction, what);
    return;
  }
  const Shape dims = dims_of(file_space.get());
  const haddr_t start = H5Dget_offset(dset);
  const Hid dxpl = transfer(H5FD_MPIO_INDEPENDENT);
  for (const Box& piece : run_pieces(dims, box, kPieceBytes / sizeof(T))) {
    const Box in_memory{memory.box.lower + (piece.lower - box.lower),
                        piece.extent};
    move_box(dset, file_space.get(), piece, memory.dims, in_memory, memory.data,
             dxpl.get(), direction, what);
    if (start == HADDR_UNDEF) continue;  // chunked: no single offset
    window.moved(direction, start, sizeof(T), dims, piece);
  }
  window.finish();
}

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_H5_TRANSFER_H_
