// The measured choice of a local pooling's implementation, with a
// stand-in timer: the candidates timed, the fastest kept, the reference
// loops only where nothing else runs.
#include "kernels/pool_impl_search.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "distconv/halo_layout.h"

namespace distconv {
namespace {

struct Problem {
  PoolDesc desc = PoolDesc::make(PoolKind::kMax, {2, 2});
  Shape src{1, 4, 8, 8}, dst{1, 4, 4, 4};
  Shape src_strides = dense_strides(src, StorageOrder::kChannelsLast);
  Shape dst_strides = dense_strides(dst, StorageOrder::kChannelsLast);
};

// A timer saying `ms[impl]` for each call, counting them.
struct StandIn {
  std::map<PoolImpl, float> ms;
  std::map<PoolImpl, int> calls;
  PoolImplSearchOptions options() {
    PoolImplSearchOptions o;
    o.reps = 3;
    o.timer = [this](PoolImpl impl, const std::function<void()>& run) {
      run();
      ++calls[impl];
      return ms.at(impl);
    };
    return o;
  }
};

TEST(PoolImplSearch, TheFastestCandidateWins) {
  const Problem p;
  for (PoolImpl fast : {PoolImpl::kSlabs, PoolImpl::kOneCall}) {
    StandIn t;
    t.ms = {{PoolImpl::kSlabs, fast == PoolImpl::kSlabs ? 1.0f : 2.0f},
            {PoolImpl::kOneCall, fast == PoolImpl::kOneCall ? 1.0f : 2.0f}};
    const PoolImplTiming pick = time_pool_impls<float>(
        p.desc, p.src, p.src_strides, p.dst, p.dst_strides, {}, t.options());
    EXPECT_EQ(pick.impl, fast);
    EXPECT_EQ(pick.ms, 1.0f);
    // Each oneDNN candidate timed reps times; the reference loops not.
    EXPECT_EQ(t.calls[PoolImpl::kSlabs], 3);
    EXPECT_EQ(t.calls[PoolImpl::kOneCall], 3);
    EXPECT_EQ(t.calls.count(PoolImpl::kReference), 0u);
  }
}

TEST(PoolImplSearch, TiesGoToTheEarlierInTheList) {
  const Problem p;
  StandIn t;
  t.ms = {{PoolImpl::kSlabs, 1.0f}, {PoolImpl::kOneCall, 1.0f}};
  EXPECT_EQ(time_pool_impls<float>(p.desc, p.src, p.src_strides, p.dst,
                                   p.dst_strides, {}, t.options())
                .impl,
            PoolImpl::kSlabs);
}

TEST(PoolImplSearch, DoubleHasTheReferenceLoopsOnly) {
  const Problem p;
  StandIn t;
  const auto all = time_pool_impl_list<double>(
      p.desc, p.src, p.src_strides, p.dst, p.dst_strides, {}, t.options());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].impl, PoolImpl::kReference);
  EXPECT_EQ(all[0].ms, 0.0f);
  EXPECT_TRUE(t.calls.empty());
}

TEST(PoolImplSearch, ProblemsNameWhatTheKernelSees) {
  const Problem p;
  const std::string a = pool_problem(p.desc, p.src, p.src_strides, p.dst,
                                     p.dst_strides, {}, "float");
  EXPECT_EQ(a, pool_problem(p.desc, p.src, p.src_strides, p.dst, p.dst_strides,
                            {}, "float"));
  EXPECT_NE(a, pool_problem(p.desc, p.src, p.src_strides, p.dst, p.dst_strides,
                            {}, "bf16"));
  EXPECT_NE(
      a, pool_problem(PoolDesc::make(PoolKind::kAverageIncludePadding, {2, 2}),
                      p.src, p.src_strides, p.dst, p.dst_strides, {}, "float"));
  EXPECT_NE(a, pool_problem(p.desc, p.src,
                            dense_strides(p.src, StorageOrder::kChannelsFirst),
                            p.dst, p.dst_strides, {}, "float"));
}

}  // namespace
}  // namespace distconv
