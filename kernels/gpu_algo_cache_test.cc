#include "kernels/gpu_algo_cache.h"

#include <gtest/gtest.h>

namespace distconv {
namespace {

TEST(GpuAlgoCache, KeysTellProblemsApart) {
  EXPECT_EQ(problem_key("fwd 1x16x32x32"), problem_key("fwd 1x16x32x32"));
  EXPECT_NE(problem_key("fwd 1x16x32x32"), problem_key("fwd 1x16x32x31"));
  EXPECT_NE(problem_key(""), problem_key("x"));
}

TEST(GpuAlgoCache, FindsWhatWasPutAndCountsLookups) {
  GpuAlgoCache cache;
  EXPECT_FALSE(cache.find(7).has_value());
  cache.put(7, {3, 1, 1.5f, true});
  const auto e = cache.find(7);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->algorithm, 3);
  EXPECT_EQ(e->math, 1);
  EXPECT_EQ(e->ms, 1.5f);
  EXPECT_TRUE(e->copies);
  EXPECT_FALSE(cache.find(8).has_value());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.hits(), 0u);  // finding is not taking
  cache.record_lookup(true);
  cache.record_lookup(false);
  cache.record_lookup(false);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 2u);
}

// As the ranks' agreement: the faster choice stays, ties to the lower
// algorithm.
TEST(GpuAlgoCache, KeepsTheFasterChoiceOfAProblem) {
  GpuAlgoCache cache;
  cache.put(1, {5, 0, 2.0f});
  cache.put(1, {6, 0, 3.0f});  // slower: ignored
  EXPECT_EQ(cache.find(1)->algorithm, 5);
  cache.put(1, {2, 0, 2.0f});  // as fast, lower number
  EXPECT_EQ(cache.find(1)->algorithm, 2);
  cache.put(1, {7, 1, 1.0f});  // faster
  EXPECT_EQ(cache.find(1)->algorithm, 7);
  cache.put(1, {7, 0, 1.0f});  // as fast, the same number, lower math
  EXPECT_EQ(cache.find(1)->math, 0);
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace distconv
