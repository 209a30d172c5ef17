#include "halo/cuda/box_segments.h"

#include <random>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/box_copy.h"
#include "gtest/gtest.h"
#include "halo/cuda/box_testing.h"

namespace distconv {
namespace {

// Packs `boxes` of `array` the way the CUDA kernels do: unit by unit through
// segment_array_index, `width` elements per unit.
std::vector<int> pack_by_segments(const std::vector<int>& array,
                                  const BoxSegments& s) {
  std::vector<int> packed(s.packed_volume, -1);
  for (const BoxSegment& seg : s.segments) {
    for (std::int64_t k = 0; k < seg.volume; ++k) {
      const std::int64_t from = segment_array_index(seg, k) * s.width;
      const std::int64_t to = (seg.packed_offset + k) * s.width;
      for (int j = 0; j < s.width; ++j) packed[to + j] = array[from + j];
    }
  }
  return packed;
}

// The host's packing (halo_exchange.cc's), box after box.
std::vector<int> pack_by_rows(const std::vector<int>& array,
                              const Shape& extent,
                              const std::vector<Box>& boxes) {
  std::vector<int> packed;
  for (const Box& b : boxes) {
    std::vector<int> one(b.volume());
    internal::pack_box(array.data(), extent, b, one.data());
    packed.insert(packed.end(), one.begin(), one.end());
  }
  return packed;
}

std::vector<int> iota_of(const Shape& extent) {
  std::vector<int> a(extent.volume());
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i);
  return a;
}

void ExpectSamePacking(const Shape& extent, const std::vector<Box>& boxes) {
  const std::vector<int> array = iota_of(extent);
  const std::vector<int> want = pack_by_rows(array, extent, boxes);
  for (int max_width : {1, 2, 4, 8}) {
    const BoxSegments s = make_box_segments(extent, boxes, max_width);
    ASSERT_EQ(s.packed_volume, static_cast<std::int64_t>(want.size()));
    ASSERT_LE(s.width, max_width);
    EXPECT_EQ(pack_by_segments(array, s), want)
        << "extent " << extent << ", max_width " << max_width;
  }
}

// Every send and receive box of every part of every halo layout case (4D
// and 5D, uneven and empty shards, wide and asymmetric halos, both storage
// orders) packs to what the host's row walker packs.
TEST(BoxSegments, HaloPlanBoxesPackLikeTheHost) {
  testing::for_each_halo_box_list(
      {Shape{1, 1, 2, 2}, Shape{2, 1, 3, 1}, Shape{1, 1, 2, 1, 2}}, -1,
      [](const std::string& name, const Shape& extent,
         const std::vector<Box>& boxes) {
        SCOPED_TRACE(name);
        ExpectSamePacking(extent, boxes);
      });
}

// Accumulates `packed` into `array` the way the CUDA kernels do: wave after
// wave, each segment of a wave in reverse order (any order must do, since
// a wave's boxes are disjoint). op is not commutative, so a cell's
// contributions must arrive in the boxes' order.
unsigned accumulate_op(unsigned a, unsigned b) { return a * 3u + b; }

std::vector<unsigned> accumulate_by_waves(std::vector<unsigned> array,
                                          const std::vector<unsigned>& packed,
                                          const BoxSegments& s) {
  for (size_t w = 0; w + 1 < s.wave_begin.size(); ++w) {
    for (size_t i = s.wave_begin[w + 1]; i-- > s.wave_begin[w];) {
      const BoxSegment& seg = s.segments[i];
      for (std::int64_t k = 0; k < seg.volume; ++k) {
        for (int j = 0; j < s.width; ++j) {
          unsigned& cell = array[segment_array_index(seg, k) * s.width + j];
          cell = accumulate_op(cell, packed[(seg.packed_offset + k) * s.width + j]);
        }
      }
    }
  }
  return array;
}

TEST(BoxSegments, WavesKeepEachCellsOrderOfContributions) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Shape extent{2, 3, 1 + static_cast<Index>(rng() % 6),
                       1 + static_cast<Index>(rng() % 6)};
    std::vector<Box> boxes;
    for (int b = 0; b < 6; ++b) {
      Box box{Shape::filled(4, 0), Shape::filled(4, 0)};
      for (int d = 0; d < 4; ++d) {
        box.lower[d] = static_cast<Index>(rng() % extent[d]);
        box.extent[d] =
            1 + static_cast<Index>(rng() % (extent[d] - box.lower[d]));
      }
      boxes.push_back(box);
    }
    const BoxSegments s = make_box_segments(extent, boxes, 4);
    ASSERT_EQ(s.wave_begin.front(), 0u);
    ASSERT_EQ(s.wave_begin.back(), s.segments.size());
    for (size_t w = 0; w + 1 < s.wave_begin.size(); ++w) {
      for (size_t i = s.wave_begin[w]; i < s.wave_begin[w + 1]; ++i) {
        for (size_t j = i + 1; j < s.wave_begin[w + 1]; ++j) {
          EXPECT_TRUE(intersect(s.boxes[i], s.boxes[j]).empty());
        }
      }
    }
    std::vector<unsigned> packed(s.packed_volume);
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = 1000u + i;
    std::vector<unsigned> want(extent.volume());
    for (size_t i = 0; i < want.size(); ++i) want[i] = static_cast<unsigned>(i);
    const std::vector<unsigned> start = want;
    const unsigned* in = packed.data();
    for (const Box& b : boxes) {
      in = internal::combine_box(in, extent, b, want.data(), accumulate_op);
    }
    EXPECT_EQ(accumulate_by_waves(start, packed, s), want);
  }
}

TEST(BoxSegments, RandomBoxesPackLikeTheHost) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 4);  // 2..5 dimensions
    const Shape extent = testing::random_extent(rng, n, 8);
    ExpectSamePacking(extent, testing::random_boxes(rng, extent, 3));
  }
}

// An H-halo of an NCHW tensor: W merges into the row, N and C into one outer
// dimension; 16-byte units where everything is a multiple of 4.
TEST(BoxSegments, MergesDimensionsAndVectorises) {
  const Shape extent{2, 3, 10, 8};
  const BoxSegments s =
      make_box_segments(extent, {Box{{0, 0, 1, 0}, {2, 3, 1, 8}}}, 4);
  ASSERT_EQ(s.segments.size(), 1u);
  const BoxSegment& seg = s.segments[0];
  EXPECT_EQ(s.width, 4);
  EXPECT_EQ(seg.row, 2);  // 8 cells = 2 units
  EXPECT_EQ(seg.outer_dims, 1);
  EXPECT_EQ(seg.count[0], 6);       // N*C
  EXPECT_EQ(seg.stride[0], 80 / 4);  // H*W, in units
  EXPECT_EQ(s.max_volume, 12);
  // A W-halo of one column cannot be vectorised.
  const BoxSegments w =
      make_box_segments(extent, {Box{{0, 0, 0, 7}, {2, 3, 10, 1}}}, 4);
  EXPECT_EQ(w.width, 1);
  EXPECT_EQ(w.segments[0].row, 1);
}

TEST(BoxSegments, EmptyBoxesTakeNoRoom) {
  const Shape extent{1, 2, 4, 4};
  const BoxSegments s = make_box_segments(
      extent, {Box{{0, 0, 0, 0}, {1, 2, 1, 4}}, Box{{0, 0, 2, 0}, {1, 2, 0, 4}},
               Box{{0, 0, 3, 0}, {1, 2, 1, 4}}},
      1);
  ASSERT_EQ(s.segments.size(), 2u);
  EXPECT_EQ(s.wave_begin, (std::vector<std::size_t>{0, 2}));  // disjoint
  EXPECT_EQ(s.segments[1].packed_offset, 8);
  EXPECT_EQ(s.packed_volume, 16);
}

TEST(BoxSegments, RejectsBadInput) {
  const Shape extent{1, 2, 4, 4};
  try {
    make_box_segments(extent, {Box{{0, 0, 3, 0}, {1, 2, 2, 4}}}, 4);
    FAIL() << "a box past the array was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kShapeMismatch);
  }
  try {
    make_box_segments(extent, {}, 3);
    FAIL() << "max_width 3 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
  try {
    make_box_segments(Shape{1, 1, 65536, 32768},
                      {Box{{0, 0, 0, 0}, {1, 1, 65536, 32768}}}, 4);
    FAIL() << "a box of 2^31 cells was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
}

}  // namespace
}  // namespace distconv
