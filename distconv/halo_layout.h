// HaloLayout: a Distribution plus, for every part, how many halo cells its
// local buffer holds below and above its shard in each dimension, and the
// boundary condition of each dimension. Pure index math: no MPI.
//
// A part's local buffer is its shard grown by its halo widths:
//
//        global W -->
//        +----+--------------------+----+
//        | hl |   shard (owned)    | hu |   hl, hu: widths.lower/upper[W]
//        +----+--------------------+----+
//        <------ local buffer extent ----->
//
// Widths may differ from part to part (a convolution derives them from its
// stride, padding and dilation and the part's offset) and may exceed the
// neighbour's shard (the exchange then reads from parts further away). Halo
// cells past an open boundary are part of the buffer but never written by
// an exchange (they hold padding); with a periodic boundary they are filled
// from the other end. Only spatial dimensions (index >= 2) carry halos.
// A part whose shard is empty in N or C has an empty buffer: its widths are
// zero. One whose shard is empty only in spatial dimensions keeps its widths
// and its buffer holds halo cells only (a strided convolution's rank that
// owns no output rows may still need the neighbours' gradients).
//
// The storage order says how the local buffer is laid out in memory:
// row-major over (N, C, [D,] H, W) (kChannelsFirst, the default), or over
// (N, [D,] H, W, C) (kChannelsLast, what oneDNN's CPU convolutions are
// fastest with). Coordinates, boxes and shapes stay in the logical order
// (N, C, spatial...) everywhere; only the buffer's strides differ.
//
//   Distribution dist(Shape{2, 3, 64, 64}, Shape{1, 1, 2, 2});
//   HaloLayout layout(dist, HaloWidths::symmetric({0, 0, 1, 1}));
//   layout.local_shape(0);       // {2, 3, 34, 34}
//   layout.interior(0);          // local box [0:2, 0:3, 1:33, 1:33)
#ifndef DISTCONV_HALO_LAYOUT_H_
#define DISTCONV_HALO_LAYOUT_H_

#include <optional>
#include <vector>

#include "distconv/box.h"
#include "distconv/distribution.h"
#include "distconv/shape.h"

namespace distconv {

enum class StorageOrder { kChannelsFirst, kChannelsLast };

// Element strides, in logical order (N, C, spatial...), of a dense array of
// `extent` stored in `order`: {C*H*W, H*W, W, 1} channels-first,
// {H*W*C, 1, W*C, C} channels-last.
Shape dense_strides(const Shape& extent, StorageOrder order);
// Whether a view with these strides is dense in `order` from dimension
// `from` on (0: the whole array; 1: each sample). Dimensions of extent 1
// may have any stride.
bool is_dense(const Shape& extent, const Shape& strides, StorageOrder order,
              int from = 0);
// Elements from a view's first element to its last, + 1 (non-negative
// strides): the buffer a view of `extent` with `strides` needs; 0 for an
// empty view.
Index strided_span(const Shape& extent, const Shape& strides);

struct HaloWidths {
  Shape lower;
  Shape upper;

  static HaloWidths none(int ndims);
  static HaloWidths symmetric(const Shape& widths);  // lower == upper

  friend bool operator==(const HaloWidths& a, const HaloWidths& b) {
    return a.lower == b.lower && a.upper == b.upper;
  }
  friend bool operator!=(const HaloWidths& a, const HaloWidths& b) {
    return !(a == b);
  }
};

class HaloLayout {
 public:
  // No halos, open boundaries.
  explicit HaloLayout(const Distribution& dist);
  // The same widths on every part. `boundaries` has one entry per dimension,
  // or is empty for all open.
  HaloLayout(const Distribution& dist, const HaloWidths& widths,
             std::vector<Boundary> boundaries = {});
  // Widths per part, indexed by Distribution::part_index.
  HaloLayout(const Distribution& dist, std::vector<HaloWidths> per_part,
             std::vector<Boundary> boundaries = {});

  const Distribution& distribution() const { return dist_; }
  int ndims() const { return dist_.ndims(); }
  int num_parts() const { return dist_.num_parts(); }
  Boundary boundary(int dim) const { return boundaries_[dim]; }
  const HaloWidths& widths(int part) const;
  StorageOrder storage_order() const { return storage_; }
  // The same layout with another storage order.
  HaloLayout with_storage(StorageOrder order) const;

  Box shard(int part) const { return dist_.shard(part); }  // global
  Box buffer_box(int part) const;     // global coordinates (may leave tensor)
  Shape local_shape(int part) const;  // extent of the local buffer
  Box interior(int part) const;       // the shard in local coordinates
  // The halo cells on one side of one dimension, in local coordinates,
  // spanning the whole buffer in the other dimensions (corners included).
  Box halo_slab(int part, int dim, Side side) const;

  // Logical <-> memory order. to_storage permutes a shape or box given in
  // logical order into the order of the buffer's dimensions (slowest
  // first); storage_shape(part) is the buffer as a row-major array.
  Shape to_storage(const Shape& logical) const;
  Box to_storage(const Box& logical) const {
    return {to_storage(logical.lower), to_storage(logical.extent)};
  }
  Shape storage_shape(int part) const { return to_storage(local_shape(part)); }
  // Element strides of the logical dimensions within the local buffer.
  Shape local_strides(int part) const;

  friend bool operator==(const HaloLayout& a, const HaloLayout& b) {
    return a.dist_ == b.dist_ && a.widths_ == b.widths_ &&
           a.boundaries_ == b.boundaries_ && a.storage_ == b.storage_;
  }
  friend bool operator!=(const HaloLayout& a, const HaloLayout& b) {
    return !(a == b);
  }

 private:
  Distribution dist_;
  std::vector<HaloWidths> widths_;
  std::vector<Boundary> boundaries_;
  StorageOrder storage_ = StorageOrder::kChannelsFirst;
};

// Sharing one tensor between layers: a tensor allocated once with the
// widest halos its consumers need serves them all (each layer's options
// take the layout to plan for), so chained layers copy no shards.
//
//   HaloLayout both = widest(conv_a.src_layout(), pool.src_layout());
//   ConvolutionOptions o;  o.src_layout = both;   // re-plan with it
//
// widest(): per part and side, the larger of the two widths. Throws
// kShapeMismatch unless both have the same distribution, boundaries and
// storage order.
HaloLayout widest(const HaloLayout& a, const HaloLayout& b);
// Whether `layout` has need's distribution, boundaries and storage order,
// and on every part at least need's halo widths.
bool covers(const HaloLayout& layout, const HaloLayout& need);
// What a layer plans a tensor with: `given` (from its options) when set,
// which must cover `need` (else kInvalidArgument naming `what`), or `need`.
HaloLayout chosen_layout(const std::optional<HaloLayout>& given,
                         const HaloLayout& need, const char* what);

}  // namespace distconv

#endif  // DISTCONV_HALO_LAYOUT_H_
