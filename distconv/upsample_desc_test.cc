#include "distconv/upsample_desc.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(UpsampleDesc, DstShape) {
  EXPECT_EQ((UpsampleDesc{{2, 3}}.dst_shape({2, 5, 4, 7})),
            (Shape{2, 5, 8, 21}));
  EXPECT_EQ((UpsampleDesc{{1, 2, 1}}.dst_shape({1, 2, 3, 4, 5})),
            (Shape{1, 2, 3, 8, 5}));
  EXPECT_EQ((UpsampleDesc{{4}}.dst_shape({1, 1, 0})), (Shape{1, 1, 0}));
}

// Every part's output shard is its input shard scaled by the factors, so
// the owner of output cell i owns input cell i / f; the parts still tile
// the output.
TEST(UpsampleDesc, OutputShardsAreInputShardsScaled) {
  const std::vector<BlockPartition> src_parts = {
      BlockPartition::balanced(3, 2), BlockPartition::balanced(4, 1),
      BlockPartition::from_sizes({0, 3, 1, 0}),
      BlockPartition::balanced(5, 3)};
  const Distribution src(src_parts);
  const UpsampleDesc up{{3, 2}};
  const Distribution dst = up.dst_distribution(src);
  EXPECT_EQ(dst.global_shape(), (Shape{3, 4, 12, 10}));
  EXPECT_EQ(dst.grid_shape(), src.grid_shape());
  for (int p = 0; p < src.num_parts(); ++p) {
    const Box in = src.shard(p), out = dst.shard(p);
    EXPECT_EQ(out.lower, (Shape{in.lower[0], in.lower[1], 3 * in.lower[2],
                                2 * in.lower[3]}));
    EXPECT_EQ(out.extent, (Shape{in.extent[0], in.extent[1],
                                 3 * in.extent[2], 2 * in.extent[3]}));
  }
  const Shape g = dst.global_shape();
  for (Index i = 0; i < g.volume(); ++i) {
    Shape o = unravel(i, g);
    Shape s = o;
    s[2] /= 3;
    s[3] /= 2;
    EXPECT_EQ(dst.owner(o), src.owner(s)) << o;
  }
}

void ExpectInvalid(const UpsampleDesc& up, const Shape& src,
                   const char* what) {
  try {
    up.validate(src);
    ADD_FAILURE() << "no error for " << what;
  } catch (const Error& e) {
    SCOPED_TRACE(e.what());
    EXPECT_TRUE(e.kind() == ErrorKind::kInvalidArgument ||
                e.kind() == ErrorKind::kShapeMismatch);
  }
}

TEST(UpsampleDesc, RejectsBadInput) {
  ExpectInvalid(UpsampleDesc{{2, 0}}, {1, 1, 4, 4}, "a zero factor");
  ExpectInvalid(UpsampleDesc{{-1, 2}}, {1, 1, 4, 4}, "a negative factor");
  ExpectInvalid(UpsampleDesc{{2, 2}}, {1, 1, 4, 4, 4}, "too few factors");
  ExpectInvalid(UpsampleDesc{{2, 2}}, {1, 1, -4, 4}, "a negative extent");
  ExpectInvalid(UpsampleDesc{{}}, {1, 1}, "no spatial dimensions");
  ExpectInvalid(UpsampleDesc{{2, 2, 2, 2}}, {1, 1, 2, 2, 2}, "4 factors");
  ExpectInvalid(UpsampleDesc{{std::numeric_limits<Index>::max() / 2, 1}},
                {1, 1, 3, 4}, "an output extent past the index type");
}

}  // namespace
}  // namespace distconv
