// Test helpers for plan values (PoolPlan, DeconvPlan, ...): properties the
// plans of every rank share, checked without MPI.
//
//   expect_ranks_agree_on_layouts(
//       src, desc.dst_shape(shape),
//       [&](int r) { return plan_pooling(desc, src, r); });
#ifndef DISTCONV_TESTS_PLAN_TESTING_H_
#define DISTCONV_TESTS_PLAN_TESTING_H_

#include <gtest/gtest.h>

#include "distconv/distribution.h"
#include "distconv/shape.h"

namespace distconv::testing {

// Every rank's plan (plan_of(rank)) has the same src_layout() and
// dst_layout(): src's distribution, and an output of dst_shape.
template <typename PlanOf>
void expect_ranks_agree_on_layouts(const Distribution& src,
                                   const Shape& dst_shape, PlanOf plan_of) {
  const auto first = plan_of(0);
  EXPECT_EQ(first.src_layout().distribution(), src);
  EXPECT_EQ(first.dst_layout().distribution().global_shape(), dst_shape);
  for (int r = 1; r < src.num_parts(); ++r) {
    const auto p = plan_of(r);
    EXPECT_EQ(p.src_layout(), first.src_layout());
    EXPECT_EQ(p.dst_layout(), first.dst_layout());
  }
}

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_PLAN_TESTING_H_
