#include <gtest/gtest.h>

#include "io/internal/mpi_io.h"

namespace distconv::io::internal {
namespace {

// The pieces are runs of at most `max` elements that cover the box once,
// in file order.
void check(const Shape& global, const Box& box, Index max) {
  ASSERT_TRUE(one_run(global, box));
  Index next = linear_index(box.lower, global), total = 0;
  for (const Box& p : run_pieces(box, max)) {
    EXPECT_TRUE(one_run(global, p)) << p.lower << " " << p.extent;
    EXPECT_TRUE(p.volume() <= max || p.volume() == p.extent[p.ndims() - 1]);
    EXPECT_TRUE(box.contains(p));
    EXPECT_EQ(linear_index(p.lower, global), next) << "not in file order";
    next += p.volume();
    total += p.volume();
  }
  EXPECT_EQ(total, box.volume());
}

TEST(RunPieces, CoverARunInFileOrder) {
  const Shape g{2, 4, 6, 5, 3};
  check(g, Box{{0, 0, 0, 0, 0}, g}, 1000);              // one piece
  check(g, Box{{0, 0, 0, 0, 0}, g}, 7);                 // rows of W
  check(g, Box{{1, 0, 0, 0, 0}, {1, 4, 6, 5, 3}}, 40);  // a sample
  check(g, Box{{1, 2, 0, 0, 0}, {1, 1, 6, 5, 3}}, 30);  // D slabs
  check(g, Box{{1, 2, 3, 0, 0}, {1, 1, 2, 5, 3}}, 2);   // beyond a row
  check(g, Box{{0, 1, 0, 0, 0}, {1, 3, 6, 5, 3}}, 100);
  EXPECT_TRUE(run_pieces(Box{{0, 0, 0, 0, 0}, {0, 4, 6, 5, 3}}, 10).empty());
  EXPECT_FALSE(one_run(g, Box{{0, 0, 0, 0, 0}, {1, 4, 3, 5, 3}}));
}

}  // namespace
}  // namespace distconv::io::internal
