#include "distconv/pool_desc.h"

#include <gtest/gtest.h>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(PoolDesc, MakeUsesNonOverlappingWindows) {
  const PoolDesc p = PoolDesc::make(PoolKind::kMax, {2, 3});
  EXPECT_EQ(p.stride, (Shape{2, 3}));
  EXPECT_EQ(p.dst_shape({1, 4, 8, 9}), (Shape{1, 4, 4, 3}));
  // A remainder smaller than the stride is dropped, as in oneDNN/PyTorch.
  EXPECT_EQ(p.dst_shape({2, 1, 9, 11}), (Shape{2, 1, 4, 3}));
}

TEST(PoolDesc, StridePaddingAnd3D) {
  PoolDesc p = PoolDesc::make(PoolKind::kAverageExcludePadding, {3, 3, 2});
  p.stride = {2, 1, 2};
  p.padding_lower = {1, 0, 1};
  p.padding_upper = {1, 2, 0};
  // (7 + 2 - 3) / 2 + 1 = 4; (5 + 2 - 3) / 1 + 1 = 5; (6 + 1 - 2) / 2 + 1 = 3.
  EXPECT_EQ(p.dst_shape({1, 2, 7, 5, 6}), (Shape{1, 2, 4, 5, 3}));
  const ConvDesc c = p.window_conv(2);
  EXPECT_EQ(c.groups, 2);
  EXPECT_EQ(c.dst_shape({1, 2, 7, 5, 6}), (Shape{1, 2, 4, 5, 3}));
}

void ExpectInvalid(const PoolDesc& p, const Shape& src, const char* what) {
  try {
    p.validate(src);
    ADD_FAILURE() << "no error for " << what;
  } catch (const Error& e) {
    SCOPED_TRACE(e.what());
    EXPECT_TRUE(e.kind() == ErrorKind::kInvalidArgument ||
                e.kind() == ErrorKind::kShapeMismatch);
  }
}

TEST(PoolDesc, RejectsBadInput) {
  PoolDesc p = PoolDesc::make(PoolKind::kMax, {2, 2});
  ExpectInvalid(p, {1, 1, 4}, "a 1D input");
  ExpectInvalid(p, {1, 0, 4, 4}, "no channels");
  ExpectInvalid(p, {1, 1, 1, 4}, "a kernel larger than the input");
  ExpectInvalid(p, {-1, 1, 4, 4}, "a negative batch");
  PoolDesc q = p;
  q.padding_lower = {2, 0};
  ExpectInvalid(q, {1, 1, 4, 4}, "padding as wide as the kernel");
  q = p;
  q.stride = {0, 1};
  ExpectInvalid(q, {1, 1, 4, 4}, "stride 0");
  q = p;
  q.stride = {1, 1, 1};
  ExpectInvalid(q, {1, 1, 4, 4}, "a stride of the wrong rank");
  ExpectInvalid(PoolDesc::make(PoolKind::kMax, {2}), {1, 1, 4}, "1D pooling");
}

}  // namespace
}  // namespace distconv
