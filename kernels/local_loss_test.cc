// LocalLoss against the reference losses on views inside halos and dense
// ones, in both storage orders, fp32 and fp64, every kind: the per-sample
// sums give the reference's per-sample and total losses, the gradient
// (alone, or with the sums in one pass) the reference's, and bad class
// indices are counted. The host's row loops against the cell functions
// the CUDA kernels run, and the 16-bit types against fp32.
#include "kernels/local_loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/element_types.h"
#include "kernels/internal/cell_walk.h"
#include "kernels/reference/loss.h"
#include "kernels/view_testing.h"

namespace distconv {
namespace {

template <typename T>
class LocalLossTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LocalLossTest, Types);

// The view's elements in row-major order.
template <typename V>
std::vector<V> row_major(const StridedView<V>& v) {
  std::vector<V> out;
  v.for_each([&](const Shape&, V& e) { out.push_back(e); });
  return out;
}

template <typename T, typename Target>
void check(const LossDesc& desc, const Shape& shape, bool dense,
           StorageOrder order, std::mt19937_64& rng) {
  SCOPED_TRACE(::testing::Message()
               << to_string(desc.kind) << " " << shape << " dense " << dense
               << " channels-last " << (order == StorageOrder::kChannelsLast));
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  const Shape target_shape = desc.target_shape(shape);
  testing::Embedded<T> x = testing::embed<T>(shape, rng, dense, order);
  testing::Embedded<Target> t =
      testing::embed<Target>(target_shape, rng, dense, order);
  testing::Embedded<T> dx = testing::embed<T>(shape, rng, dense, order);
  std::uniform_real_distribution<double> value(-2, 2);
  x.view.for_each([&](const Shape&, T& v) { v = T(value(rng)); });
  const Index classes = shape[1];
  t.view.for_each([&](const Shape&, Target& v) {
    if constexpr (std::is_integral_v<Target>) {
      v = std::uniform_int_distribution<Target>(0, classes - 1)(rng);
    } else {
      v = Target(std::abs(value(rng)));
    }
  });
  const std::vector<T> xs = row_major(x.view);
  const std::vector<Target> ts = row_major(t.view);
  const Index n = shape[0];
  std::vector<double> per_sample(n);
  LossDesc sum = desc;
  sum.reduction = LossReduction::kSum;
  const double total =
      reference::loss_fwd(sum, shape, xs.data(), ts.data(), per_sample.data());

  const LossCellDesc cells = loss_cell_desc(desc, classes);
  const std::vector<double> sums = LocalLoss<T>(cells).template sums<Target>(
      LossTerms::kLossesAndCounts, x.view, t.view);
  ASSERT_EQ(sums.size(), static_cast<size_t>(2 * n + 1));
  double all = 0;
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(sums[i], per_sample[i], tol * (1 + std::abs(per_sample[i])));
    all += sums[i];
  }
  EXPECT_NEAR(all, total, tol * (1 + std::abs(total)));
  EXPECT_EQ(sums[2 * n], 0);  // no bad index

  // The reference's gradient of the sum, i.e. w = 1.
  std::vector<T> want(shape.volume());
  reference::loss_bwd(sum, shape, xs.data(), ts.data(), want.data());
  LocalLoss<T>(cells).template gradient<Target>(1.0, x.view, t.view, dx.view);
  const std::vector<T> got = row_major(dx.view);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(double(want[i]))));
  }
  // In one pass: the same sums and the same gradient, bit for bit.
  testing::Embedded<T> dx2 = testing::embed<T>(shape, rng, dense, order);
  const std::vector<double> fused =
      LocalLoss<T>(cells).template sums_and_gradient<Target>(1.0, x.view,
                                                             t.view, dx2.view);
  EXPECT_EQ(fused, sums);
  EXPECT_EQ(row_major(dx2.view), got);
}

TYPED_TEST(LocalLossTest, MatchesTheReferenceOnAnyView) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  // Rows of 3 cells, of 150 (three calls of the row loop, the last one
  // short) and cells of 70 channels (more than the row loop keeps
  // exponentials for).
  const Shape shapes[] = {Shape{2, 4, 5, 3}, Shape{3, 3, 2, 4, 3},
                          Shape{2, 3, 2, 150}, Shape{1, 70, 2, 3}};
  for (StorageOrder order :
       {StorageOrder::kChannelsLast, StorageOrder::kChannelsFirst}) {
    for (bool dense : {true, false}) {
      for (const Shape& shape : shapes) {
        check<T, std::int64_t>(LossDesc::make(LossKind::kCrossEntropyIndices),
                               shape, dense, order, rng);
        check<T, T>(LossDesc::make(LossKind::kCrossEntropyProbabilities), shape,
                    dense, order, rng);
        check<T, T>(LossDesc::make(LossKind::kMeanSquaredError), shape, dense,
                    order, rng);
      }
    }
  }
}

// The host's row loops against kernels/channel_cells.h's cell functions
// (what the CUDA kernels run), cell by cell, with ignored and bad class
// indices among the counted ones, and in place (dx = x): the same terms
// and gradient to the last few bits, nothing in the cells that do not
// count.
TEST(LocalLoss, RowLoopsMatchTheCellFunctions) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(-3, 3);
  LossDesc desc = LossDesc::make(LossKind::kCrossEntropyIndices);
  desc.ignore_index = -100;
  for (StorageOrder order :
       {StorageOrder::kChannelsLast, StorageOrder::kChannelsFirst}) {
    for (const Shape& shape : {Shape{2, 5, 3, 100}, Shape{1, 70, 1, 67}}) {
      SCOPED_TRACE(::testing::Message()
                   << shape << " channels-last "
                   << (order == StorageOrder::kChannelsLast));
      const Index classes = shape[1];
      const LossCellDesc d = loss_cell_desc(desc, classes);
      testing::Embedded<double> x =
          testing::embed<double>(shape, rng, false, order);
      testing::Embedded<std::int64_t> t = testing::embed<std::int64_t>(
          desc.target_shape(shape), rng, false, order);
      x.view.for_each([&](const Shape&, double& v) { v = value(rng); });
      Index cell = 0;
      t.view.for_each([&](const Shape&, std::int64_t& v) {
        const Index kind = cell++ % 7;  // every 7th ignored, then one bad
        v = kind == 0   ? -100
            : kind == 1 ? classes + 2
                        : std::uniform_int_distribution<std::int64_t>(
                              0, classes - 1)(rng);
      });
      const double w = 0.25;
      // Cell by cell, through the cell functions.
      double loss = 0, count = 0, bad = 0;
      std::vector<double> want;
      const Index sx = x.view.strides()[1];
      internal::for_each_cell<2>(
          shape, {x.view.strides(), t.view.strides()},
          [&](Index, const std::array<Index, 2>& at) {
            const LossCellTerm term = loss_cell_term(
                d, x.view.data() + at[0], sx, t.view.data() + at[1], Index{1});
            loss += term.loss;
            count += term.count;
            bad += term.bad;
            std::vector<double> g(classes);
            loss_cell_gradient(d, w, x.view.data() + at[0], sx,
                               t.view.data() + at[1], Index{1}, g.data(),
                               Index{1});
            want.insert(want.end(), g.begin(), g.end());
          });
      // In place: the gradient overwrites the prediction.
      const std::vector<double> sums =
          LocalLoss<double>(d).sums_and_gradient<std::int64_t>(w, x.view,
                                                               t.view, x.view);
      double got_loss = 0, got_count = 0;
      for (Index n = 0; n < shape[0]; ++n) {
        got_loss += sums[n];
        got_count += sums[shape[0] + n];
      }
      EXPECT_NEAR(got_loss, loss, 1e-12 * std::abs(loss));
      EXPECT_EQ(got_count, count);
      EXPECT_EQ(sums[2 * shape[0]], bad);
      std::vector<double> got;
      internal::for_each_cell<1>(
          shape, {x.view.strides()},
          [&](Index, const std::array<Index, 1>& at) {
            for (Index c = 0; c < classes; ++c) {
              got.push_back(x.view.data()[at[0] + c * sx]);
            }
          });
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-15 + 1e-13 * std::abs(want[i]))
            << "at " << i;
        if (want[i] == 0) {
          EXPECT_EQ(got[i], 0) << "at " << i;
        }
      }
    }
  }
}

// 16-bit predictions run the same loops as fp32 on the same values (each
// widened exactly): the same sums but for the last bits, and fp32's
// gradient rounded to 16 bits.
template <typename T>
void check_narrow(std::mt19937_64& rng) {
  const Shape shape{2, 4, 3, 70};
  std::uniform_real_distribution<double> value(-3, 3);
  for (LossKind kind :
       {LossKind::kCrossEntropyIndices, LossKind::kCrossEntropyProbabilities,
        LossKind::kMeanSquaredError}) {
    SCOPED_TRACE(to_string(kind));
    const LossDesc desc = LossDesc::make(kind);
    const Shape target_shape = desc.target_shape(shape);
    std::vector<T> x(shape.volume()), tv(target_shape.volume());
    std::vector<std::int64_t> ti(target_shape.volume());
    for (T& v : x) v = T(float(value(rng)));
    for (T& v : tv) v = T(float(std::abs(value(rng))));
    for (std::int64_t& v : ti) {
      v = std::uniform_int_distribution<std::int64_t>(0, shape[1] - 1)(rng);
    }
    const std::vector<float> xf(x.begin(), x.end()), tf(tv.begin(), tv.end());
    std::vector<T> dx(x.size());
    std::vector<float> dxf(x.size());
    const LossCellDesc d = loss_cell_desc(desc, shape[1]);
    auto view = [&](auto* p, const Shape& s) {
      using V = std::remove_pointer_t<decltype(p)>;
      return StridedView<V>::contiguous(p, s);
    };
    std::vector<double> sums, sums_f;
    if (kind == LossKind::kCrossEntropyIndices) {
      sums = LocalLoss<T>(d).template sums_and_gradient<std::int64_t>(
          0.5, view(std::as_const(x).data(), shape),
          view(std::as_const(ti).data(), target_shape), view(dx.data(), shape));
      sums_f = LocalLoss<float>(d).sums_and_gradient<std::int64_t>(
          0.5, view(xf.data(), shape),
          view(std::as_const(ti).data(), target_shape),
          view(dxf.data(), shape));
    } else {
      sums = LocalLoss<T>(d).template sums_and_gradient<T>(
          0.5, view(std::as_const(x).data(), shape),
          view(std::as_const(tv).data(), target_shape), view(dx.data(), shape));
      sums_f = LocalLoss<float>(d).sums_and_gradient<float>(
          0.5, view(xf.data(), shape), view(tf.data(), target_shape),
          view(dxf.data(), shape));
    }
    ASSERT_EQ(sums.size(), sums_f.size());
    for (size_t i = 0; i < sums.size(); ++i) {
      EXPECT_NEAR(sums[i], sums_f[i], 1e-12 * std::abs(sums_f[i]));
    }
    // One unit in the last place of T (the products may be contracted
    // differently in the two types' loops).
    const double ulp = std::is_same_v<T, bf16> ? 0x1p-7 : 0x1p-10;
    for (size_t i = 0; i < dx.size(); ++i) {
      ASSERT_NEAR(float(dx[i]), float(T(dxf[i])),
                  1e-30 + ulp * std::abs(float(dxf[i])))
          << "at " << i;
    }
  }
}

TEST(LocalLoss, NarrowTypesMatchFloat) {
  std::mt19937_64 rng(5);
  check_narrow<bf16>(rng);
  check_narrow<fp16>(rng);
}

TEST(LocalLoss, CountsBadAndIgnoredClassIndices) {
  LossDesc desc = LossDesc::make(LossKind::kCrossEntropyIndices);
  desc.ignore_index = -100;
  const Shape shape{2, 3, 1, 2};
  std::vector<double> x(shape.volume(), 0.5);
  // Sample 0: a counted index and a bad one; sample 1: ignored, counted.
  std::vector<std::int64_t> t = {1, 3, -100, 2};
  const std::vector<double> sums =
      LocalLoss<double>(loss_cell_desc(desc, 3))
          .sums(LossTerms::kCountsOnly,
                StridedView<const double>::contiguous(x.data(), shape),
                StridedView<const std::int64_t>::contiguous(t.data(),
                                                            Shape{2, 1, 1, 2}));
  ASSERT_EQ(sums.size(), 5u);
  EXPECT_EQ(sums[2], 1);  // sample 0's count
  EXPECT_EQ(sums[3], 1);  // sample 1's count
  EXPECT_EQ(sums[4], 1);  // bad indices
}

}  // namespace
}  // namespace distconv
