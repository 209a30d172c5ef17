#include "distconv/scatter_gather.h"

#include <climits>
#include <cstdint>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/internal/box_copy.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/strided_view.h"

namespace distconv {
namespace {

using internal::check_mpi;
using internal::pack_box;
using internal::unpack_box;

// Per-rank element counts and displacements of the packed shards.
struct Counts {
  std::vector<int> counts, displs;
};

Counts shard_counts(const HaloLayout& layout) {
  Counts c;
  long long total = 0;
  for (int p = 0; p < layout.num_parts(); ++p) {
    const Index v = layout.shard(p).volume();
    c.counts.push_back(static_cast<int>(v));
    c.displs.push_back(static_cast<int>(total));
    total += v;
  }
  require(total <= INT_MAX, ErrorKind::kUnsupported, "tensor of ",
          layout.distribution().global_shape(),
          " elements is too large to scatter or gather through one root");
  return c;
}

// Every rank throws together: the root's verdict on its own array is
// broadcast before any data moves.
void validate(const HaloLayout& layout, const ProcessGrid& grid, int root,
              bool has_global) {
  require(root >= 0 && root < grid.size(), ErrorKind::kInvalidArgument,
          "root ", root, " outside [0, ", grid.size(), ")");
  int ok = has_global || layout.distribution().global_shape().volume() == 0;
  check_mpi(MPI_Bcast(&ok, 1, MPI_INT, root, grid.comm()), "MPI_Bcast");
  require(ok != 0, ErrorKind::kInvalidArgument, "the global array on root ",
          root, " is null");
}

}  // namespace

template <typename T>
void scatter(const T* global, DistTensor<T>& tensor, int root) {
  const HaloLayout& layout = tensor.layout();
  const ProcessGrid& grid = tensor.grid();
  validate(layout, grid, root, global != nullptr);
  const Counts c = shard_counts(layout);
  const Shape& gshape = layout.distribution().global_shape();
  // The buffers, agreed: an allocation failing on one rank (the root's
  // whole array, say) fails on every rank.
  std::vector<T> packed, mine;
  internal::run_collectively(grid.comm(), [&] {
    if (grid.rank() == root) packed.resize(c.displs.back() + c.counts.back());
    mine.resize(c.counts[grid.rank()]);
  });
  if (grid.rank() == root) {
    T* out = packed.data();
    for (int p = 0; p < layout.num_parts(); ++p) {
      out = pack_box(global, gshape, layout.shard(p), out);
    }
  }
  check_mpi(MPI_Scatterv(packed.data(), c.counts.data(), c.displs.data(),
                         internal::mpi_datatype<T>(), mine.data(),
                         c.counts[grid.rank()], internal::mpi_datatype<T>(),
                         root, grid.comm()),
            "MPI_Scatterv");
  if (layout.storage_order() == StorageOrder::kChannelsFirst) {
    unpack_box(mine.data(), tensor.local_shape(),
               layout.interior(grid.rank()), tensor.data());
  } else {  // the shard arrives in logical order: transpose into place
    const auto in =
        StridedView<const T>::contiguous(mine.data(), tensor.shard().extent);
    tensor.interior().for_each([&](const Shape& i, T& v) { v = in(i); });
  }
}

template <typename T>
void gather(const DistTensor<T>& tensor, T* global, int root) {
  const HaloLayout& layout = tensor.layout();
  const ProcessGrid& grid = tensor.grid();
  validate(layout, grid, root, global != nullptr);
  const Counts c = shard_counts(layout);
  std::vector<T> packed, mine;  // (as in scatter)
  internal::run_collectively(grid.comm(), [&] {
    if (grid.rank() == root) packed.resize(c.displs.back() + c.counts.back());
    mine.resize(c.counts[grid.rank()]);
  });
  if (layout.storage_order() == StorageOrder::kChannelsFirst) {
    pack_box(tensor.data(), tensor.local_shape(),
             layout.interior(grid.rank()), mine.data());
  } else {  // send the shard in logical order
    const auto out =
        StridedView<T>::contiguous(mine.data(), tensor.shard().extent);
    tensor.interior().for_each([&](const Shape& i, const T& v) { out(i) = v; });
  }
  check_mpi(MPI_Gatherv(mine.data(), c.counts[grid.rank()],
                        internal::mpi_datatype<T>(), packed.data(),
                        c.counts.data(), c.displs.data(),
                        internal::mpi_datatype<T>(), root, grid.comm()),
            "MPI_Gatherv");
  if (grid.rank() != root) return;
  const Shape& gshape = layout.distribution().global_shape();
  const T* in = packed.data();
  for (int p = 0; p < layout.num_parts(); ++p) {
    in = unpack_box(in, gshape, layout.shard(p), global);
  }
}

#define DISTCONV_INSTANTIATE(T)                                  \
  template void scatter<T>(const T*, DistTensor<T>&, int);       \
  template void gather<T>(const DistTensor<T>&, T*, int);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
