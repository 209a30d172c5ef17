// onednn::Pool in slabs against the same problem in one oneDNN call: random
// 2D and 3D problems (every kind, windows that overlap, meet or leave gaps
// between rows, padding on either side), slabs of one output row up to
// the whole sample; and the check before each slab.
#include "kernels/onednn/pool.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "distconv/error.h"
#include "kernels/view_testing.h"

namespace distconv::onednn {
namespace {

TEST(OnednnPool, SlabsGiveWhatOneCallGives) {
  std::mt19937_64 rng(7);
  auto u = [&](Index lo, Index hi) {
    return std::uniform_int_distribution<Index>(lo, hi)(rng);
  };
  int ran = 0, slabbed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto problem = testing::random_pool_problem(rng, 4, 9);
    if (!problem) continue;
    const auto& [desc, src] = *problem;
    const Shape dst = desc.dst_shape(src);
    const Index row_bytes =
        src.volume() / (src[0] * src[2]) * Index{sizeof(float)};
    PoolOptions slabs;
    slabs.slab_bytes = row_bytes * u(1, src[2] + 1);
    Pool whole(desc, src, dst), cut(desc, src, dst, slabs);
    SCOPED_TRACE(std::string(to_string(desc.kind)) + " on " + src.to_string() +
                 " in " + std::to_string(cut.calls()) + " calls");
    ++ran;
    slabbed += cut.calls() > src[0];
    // Few distinct values (ties), gradients in eighths (exact sums where
    // they are not divided).
    std::vector<float> x(src.volume()), dy(dst.volume());
    for (float& v : x) v = static_cast<float>(u(-3, 3));
    for (float& v : dy) v = static_cast<float>(u(-40, 40)) / 8;
    std::vector<float> y0(dst.volume()), y1(dst.volume(), -7.0f);
    std::vector<float> dx0(src.volume()), dx1(src.volume(), -7.0f);
    ASSERT_TRUE(whole.forward(x.data(), y0.data()));
    ASSERT_TRUE(cut.forward(x.data(), y1.data()));
    EXPECT_EQ(y1, y0);
    whole.backward(dy.data(), dx0.data());
    cut.backward(dy.data(), dx1.data());
    if (desc.kind == PoolKind::kMax) {
      EXPECT_EQ(dx1, dx0);
    } else {  // shares of a window's gradient, added in another order
      for (size_t i = 0; i < dx0.size(); ++i) {
        ASSERT_NEAR(dx1[i], dx0[i], 1e-5) << "at " << i;
      }
    }
  }
  EXPECT_GT(ran, 150);
  EXPECT_GT(slabbed, 100);
}

// The check sees every input row a window reads, in order, before oneDNN
// reads it; one that says stop ends forward() there (false), and backward
// then throws kState until a forward runs to its end.
const float* g_stop_at = nullptr;  // the value whose slab stops
std::vector<std::pair<const float*, Index>>* g_seen = nullptr;

bool record(const float* p, Index n) {
  g_seen->push_back({p, n});
  return g_stop_at != nullptr && g_stop_at >= p && g_stop_at < p + n;
}

bool record_nothing(const float*, Index n) {
  EXPECT_EQ(n, 0);
  return false;
}

TEST(OnednnPool, TheCheckSeesEachSlabBeforeItRuns) {
  PoolDesc desc = PoolDesc::make(PoolKind::kMax, {3, 2});
  desc.stride = {2, 2};
  desc.padding_lower = {1, 0};
  desc.padding_upper = {1, 0};
  const Shape src{2, 3, 11, 4}, dst = desc.dst_shape(src);
  const Index row = 3 * 4;
  PoolOptions o;
  o.slab_bytes = 5 * row * Index{sizeof(float)};  // two output rows
  Pool pool(desc, src, dst, o);
  EXPECT_EQ(pool.calls(), 2 * 3);  // 6 output rows a sample
  std::vector<float> x(src.volume(), 1.0f), y(dst.volume());
  std::vector<float> dy(dst.volume(), 1.0f), dx(src.volume());
  std::vector<std::pair<const float*, Index>> seen;
  g_seen = &seen;
  g_stop_at = nullptr;
  ASSERT_TRUE(pool.forward(x.data(), y.data(), record));
  // Rows [0, 4), [3, 8), [7, 11) of each sample: 2 + 3, 2 + 3, 2 + 2
  // windows' rows, the last to the input's end.
  const std::vector<std::pair<Index, Index>> want = {
      {0, 4}, {3, 8}, {7, 11}, {11, 15}, {14, 19}, {18, 22}};
  ASSERT_EQ(seen.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(seen[i].first, x.data() + want[i].first * row) << i;
    EXPECT_EQ(seen[i].second, (want[i].second - want[i].first) * row) << i;
  }
  pool.backward(dy.data(), dx.data());
  seen.clear();
  g_stop_at = x.data() + 16 * row;  // in the second sample's second slab
  EXPECT_FALSE(pool.forward(x.data(), y.data(), record));
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_THROW(pool.backward(dy.data(), dx.data()), Error);
  g_stop_at = nullptr;
  EXPECT_TRUE(pool.forward(x.data(), y.data(), record));
  pool.backward(dy.data(), dx.data());
  g_seen = nullptr;
}

// No samples (an empty shard): nothing to pool, in slabs or not, and no
// division by the empty rows.
TEST(OnednnPool, EmptyProblemsRunNothing) {
  for (const Shape& src : {Shape{0, 3, 6, 4}, Shape{0, 2, 5, 4, 3}}) {
    SCOPED_TRACE(src.to_string());
    PoolDesc desc =
        PoolDesc::make(PoolKind::kMax, Shape::filled(src.ndims() - 2, 2));
    desc.stride = desc.kernel;
    for (const Index slab_bytes : {Index{0}, Index{1}}) {
      PoolOptions o;
      o.slab_bytes = slab_bytes;
      try {
        Pool pool(desc, src, desc.dst_shape(src), o);
        float none = 0;
        EXPECT_TRUE(pool.forward(&none, &none, record_nothing));
        pool.backward(&none, &none);
      } catch (const Error& e) {  // oneDNN may refuse empty tensors
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace distconv::onednn
