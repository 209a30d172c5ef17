#include <gtest/gtest.h>

#include "io/internal/mpi_io.h"

namespace distconv::io::internal {
namespace {

// The pieces are runs of at most `max` elements that cover the box once,
// in file order, none longer than the box's runs.
void check(const Shape& global, const Box& box, Index max) {
  Index previous = -1, total = 0;
  for (const Box& p : run_pieces(global, box, max)) {
    EXPECT_TRUE(one_run(global, p)) << p.lower << " " << p.extent;
    EXPECT_TRUE(p.volume() <= max || p.volume() == p.extent[p.ndims() - 1]);
    EXPECT_LE(p.volume(), run_length(global, box));
    EXPECT_TRUE(box.contains(p));
    EXPECT_GT(linear_index(p.lower, global), previous) << "not in file order";
    previous = linear_index(p.lower, global);
    total += p.volume();
  }
  EXPECT_EQ(total, box.volume());
}

// One run: the pieces follow each other without gaps.
void check_one_run(const Shape& global, const Box& box, Index max) {
  ASSERT_TRUE(one_run(global, box));
  EXPECT_EQ(run_length(global, box), box.volume());
  check(global, box, max);
  Index next = linear_index(box.lower, global);
  for (const Box& p : run_pieces(global, box, max)) {
    EXPECT_EQ(linear_index(p.lower, global), next);
    next += p.volume();
  }
}

TEST(RunPieces, CoverARunInFileOrder) {
  const Shape g{2, 4, 6, 5, 3};
  check_one_run(g, Box{{0, 0, 0, 0, 0}, g}, 1000);              // one piece
  check_one_run(g, Box{{0, 0, 0, 0, 0}, g}, 7);                 // rows of W
  check_one_run(g, Box{{1, 0, 0, 0, 0}, {1, 4, 6, 5, 3}}, 40);  // a sample
  check_one_run(g, Box{{1, 2, 0, 0, 0}, {1, 1, 6, 5, 3}}, 30);  // D slabs
  check_one_run(g, Box{{1, 2, 3, 0, 0}, {1, 1, 2, 5, 3}}, 2);   // beyond a row
  check_one_run(g, Box{{0, 1, 0, 0, 0}, {1, 3, 6, 5, 3}}, 100);
  EXPECT_TRUE(
      run_pieces(g, Box{{0, 0, 0, 0, 0}, {0, 4, 6, 5, 3}}, 10).empty());
  EXPECT_EQ(run_length(g, Box{{0, 0, 0, 0, 0}, {0, 4, 6, 5, 3}}), 0);
}

TEST(RunPieces, CoverABoxOfManyRunsInFileOrder) {
  const Shape g{2, 4, 6, 5, 3};
  // A split along D of every sample and channel: 2 x 4 runs of 3 x 5 x 3.
  const Box along_d{{0, 0, 3, 0, 0}, {2, 4, 3, 5, 3}};
  EXPECT_FALSE(one_run(g, along_d));
  EXPECT_EQ(run_length(g, along_d), 45);
  EXPECT_EQ(run_pieces(g, along_d, 1000).size(), 8u);
  check(g, along_d, 1000);
  check(g, along_d, 20);
  // A split along W: runs of 2 elements.
  const Box along_w{{0, 0, 0, 0, 1}, {2, 4, 6, 5, 2}};
  EXPECT_EQ(run_length(g, along_w), 2);
  check(g, along_w, 1);
  check(g, along_w, 100);
  // Split along C and H: runs of 2 rows.
  check(g, Box{{1, 1, 2, 1, 0}, {1, 2, 4, 2, 3}}, 4);
}

}  // namespace
}  // namespace distconv::io::internal
