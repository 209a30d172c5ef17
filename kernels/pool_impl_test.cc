// The pooling implementations' list, names, exclusions and heuristic.
#include "kernels/pool_impl.h"

#include <gtest/gtest.h>

#include <string>

#include "distconv/bf16.h"
#include "distconv/error.h"

namespace distconv {
namespace {

TEST(PoolImpl, NamesRoundTripAndBadNamesSayTheChoices) {
  for (PoolImpl impl : pool_impl_list()) {
    EXPECT_EQ(pool_impl_named(to_string(impl), "--pool-impl"), impl);
  }
  try {
    pool_impl_named("blocked", "--pool-impl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(
                  "--pool-impl=blocked is not slabs, one_call or reference"),
              std::string::npos)
        << e.what();
  }
}

TEST(PoolImpl, TheReferenceLoopsComeLastAndAlwaysApply) {
  const auto list = pool_impl_list();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.back(), PoolImpl::kReference);
  EXPECT_EQ(pool_impl_excluded<double>(PoolImpl::kReference), "");
  EXPECT_EQ(pool_impl_excluded<float>(PoolImpl::kReference), "");
}

TEST(PoolImpl, OneDnnRunsWhatComputesInFp32) {
  for (PoolImpl impl : {PoolImpl::kSlabs, PoolImpl::kOneCall}) {
    EXPECT_EQ(pool_impl_excluded<float>(impl), "");
    EXPECT_EQ(pool_impl_excluded<bf16>(impl), "");  // on fp32 copies
    EXPECT_NE(pool_impl_excluded<double>(impl).find("fp32 only"),
              std::string::npos);
  }
}

TEST(PoolImpl, HeuristicSlabsMaxPoolingOnly) {
  EXPECT_EQ(heuristic_pool_impl(PoolDesc::make(PoolKind::kMax, {2, 2})),
            PoolImpl::kSlabs);
  EXPECT_EQ(heuristic_pool_impl(
                PoolDesc::make(PoolKind::kAverageIncludePadding, {3, 3})),
            PoolImpl::kOneCall);
  EXPECT_EQ(heuristic_pool_impl(
                PoolDesc::make(PoolKind::kAverageExcludePadding, {3, 3})),
            PoolImpl::kOneCall);
}

}  // namespace
}  // namespace distconv
