#include "distconv/halo_layout.h"

#include <random>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/box_copy.h"
#include "distconv/strided_view.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

TEST(HaloLayout, ExampleFromTheHeader) {
  const Distribution dist(Shape{2, 3, 64, 64}, Shape{1, 1, 2, 2});
  const HaloLayout layout(dist, HaloWidths::symmetric({0, 0, 1, 1}));
  EXPECT_EQ(layout.local_shape(0), (Shape{2, 3, 34, 34}));
  EXPECT_EQ(layout.interior(0), (Box{{0, 0, 1, 1}, {2, 3, 32, 32}}));
  EXPECT_EQ(layout.buffer_box(3), (Box{{0, 0, 31, 31}, {2, 3, 34, 34}}));
  EXPECT_EQ(layout.halo_slab(0, 3, Side::kUpper),
            (Box{{0, 0, 0, 33}, {2, 3, 34, 1}}));
}

// Every buffer cell is in the interior or in a halo slab, never both.
TEST(HaloLayout, InteriorAndSlabsCoverTheBufferOverRandomLayouts) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 4 + rng() % 2;
    Shape global = Shape::filled(n, 0), grid = Shape::filled(n, 1);
    HaloWidths w = HaloWidths::none(n);
    for (int d = 0; d < n; ++d) {
      global[d] = rng() % 6;
      grid[d] = 1 + rng() % 2;
      if (d >= 2) {
        w.lower[d] = rng() % (global[d] + 1);
        w.upper[d] = rng() % (global[d] + 1);
      }
    }
    const HaloLayout layout(Distribution(global, grid), w);
    for (int p = 0; p < layout.num_parts(); ++p) {
      const Shape local = layout.local_shape(p);
      ASSERT_EQ(layout.buffer_box(p).extent, local);
      const Box interior = layout.interior(p);
      const Box shard = layout.shard(p);
      if (n >= 3 && (shard.extent[0] == 0 || shard.extent[1] == 0)) {
        ASSERT_EQ(local, shard.extent) << "shard empty in N or C has halos";
      }
      std::vector<int> slabs(local.volume(), 0);
      for (int d = 0; d < n; ++d) {
        for (Side side : {Side::kLower, Side::kUpper}) {
          internal::for_each_row(local, layout.halo_slab(p, d, side),
                                 [&](Index off, Index len) {
                                   for (Index i = 0; i < len; ++i) {
                                     ++slabs[off + i];
                                   }
                                 });
        }
      }
      for (Index i = 0; i < local.volume(); ++i) {
        ASSERT_NE(interior.contains(unravel(i, local)), slabs[i] > 0)
            << "cell " << unravel(i, local) << " of part " << p;
      }
    }
  }
}

TEST(HaloLayout, RejectsBadWidthsAndBoundaries) {
  const Distribution dist(Shape{2, 3, 8, 8}, Shape{1, 1, 2, 2});
  auto widths = [](Shape lower, Shape upper) {
    return HaloWidths{lower, upper};
  };
  EXPECT_THROW(HaloLayout(dist, widths({0, 0, -1, 0}, {0, 0, 0, 0})), Error);
  EXPECT_THROW(HaloLayout(dist, widths({0, 1, 0, 0}, {0, 0, 0, 0})), Error);
  EXPECT_THROW(HaloLayout(dist, widths({0, 0, 9, 0}, {0, 0, 0, 0})), Error);
  EXPECT_THROW(HaloLayout(dist, widths({0, 0, 1}, {0, 0, 1})), Error);
  EXPECT_THROW(HaloLayout(dist, std::vector<HaloWidths>(3, HaloWidths::none(4))),
               Error);
  EXPECT_THROW(HaloLayout(dist, HaloWidths::none(4),
                          {Boundary::kPeriodic, Boundary::kOpen,
                           Boundary::kOpen, Boundary::kOpen}),
               Error);
  EXPECT_THROW(HaloLayout(dist, HaloWidths::none(4), {Boundary::kOpen}),
               Error);
  try {
    HaloLayout(dist, widths({0, 0, 0, 9}, {0, 0, 0, 0}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "distconv: invalid argument: halo width 9 in dimension 3 of "
                 "part 0 exceeds the tensor extent 8");
  }
}

TEST(HaloLayout, WidestCoversBothAndNothingMore) {
  const Distribution dist(Shape{1, 2, 8, 8}, Shape{1, 1, 2, 2});
  std::vector<HaloWidths> per_part(4, HaloWidths::none(4));
  per_part[3].lower = {0, 0, 2, 0};
  const HaloLayout a =
      HaloLayout(dist, HaloWidths::symmetric({0, 0, 1, 1}))
          .with_storage(StorageOrder::kChannelsLast);
  const HaloLayout b =
      HaloLayout(dist, per_part).with_storage(StorageOrder::kChannelsLast);
  const HaloLayout both = widest(a, b);
  EXPECT_TRUE(covers(both, a));
  EXPECT_TRUE(covers(both, b));
  EXPECT_FALSE(covers(a, b));
  EXPECT_FALSE(covers(b, a));
  EXPECT_EQ(both.widths(3).lower, (Shape{0, 0, 2, 1}));
  EXPECT_EQ(both.widths(3).upper, (Shape{0, 0, 1, 1}));
  EXPECT_EQ(both.widths(0), a.widths(0));
  EXPECT_EQ(chosen_layout(std::nullopt, a, "src"), a);
  EXPECT_EQ(chosen_layout(both, a, "src"), both);
  EXPECT_THROW(chosen_layout(a, b, "src"), Error);
  // Another storage order or distribution is not the same tensor.
  EXPECT_FALSE(covers(both.with_storage(StorageOrder::kChannelsFirst), a));
  EXPECT_THROW(widest(a, HaloLayout(Distribution(Shape{1, 2, 8, 8},
                                                 Shape{1, 1, 4, 1}))),
               Error);
}

TEST(BoxRows, VisitsTheBoxInRowMajorOrder) {
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 1000; ++trial) {
    const int n = 1 + rng() % 5;
    Shape extent = Shape::filled(n, 0);
    Box box{Shape::filled(n, 0), Shape::filled(n, 0)};
    for (int d = 0; d < n; ++d) {
      extent[d] = 1 + rng() % 4;
      box.lower[d] = rng() % extent[d];
      box.extent[d] = rng() % (extent[d] - box.lower[d] + 1);
      if (rng() % 3 == 0) {  // span the whole dimension
        box.lower[d] = 0;
        box.extent[d] = extent[d];
      }
    }
    std::vector<Index> expected, seen;
    std::vector<Index> data(extent.volume());
    for (Index i = 0; i < extent.volume(); ++i) data[i] = i;
    StridedView<Index>::contiguous(data.data(), extent)
        .subview(box)
        .for_each([&](const Shape&, Index& v) { expected.push_back(v); });
    internal::for_each_row(extent, box, [&](Index off, Index len) {
      for (Index i = 0; i < len; ++i) seen.push_back(off + i);
    });
    ASSERT_EQ(seen, expected) << extent << " " << box;
  }
}

TEST(HaloLayout, ChannelsLastStorageOnlyChangesStrides) {
  const Distribution dist(Shape{2, 3, 8, 6}, Shape{1, 1, 2, 1});
  const HaloLayout first(dist, HaloWidths::symmetric({0, 0, 1, 2}));
  const HaloLayout last = first.with_storage(StorageOrder::kChannelsLast);
  EXPECT_NE(first, last);
  EXPECT_EQ(last.local_shape(0), first.local_shape(0));  // {2, 3, 6, 10}
  EXPECT_EQ(last.storage_shape(0), (Shape{2, 6, 10, 3}));
  EXPECT_EQ(first.local_strides(0), (Shape{180, 60, 10, 1}));
  EXPECT_EQ(last.local_strides(0), (Shape{180, 1, 30, 3}));
  const Box b{{1, 2, 3, 4}, {1, 1, 2, 5}};
  EXPECT_EQ(last.to_storage(b), (Box{{1, 3, 4, 2}, {1, 2, 5, 1}}));
  const Distribution d5(Shape{1, 4, 3, 5, 7}, Shape{1, 1, 1, 1, 1});
  EXPECT_EQ(HaloLayout(d5).with_storage(StorageOrder::kChannelsLast)
                .local_strides(0),
            (Shape{420, 1, 140, 28, 4}));
}

}  // namespace
}  // namespace distconv
