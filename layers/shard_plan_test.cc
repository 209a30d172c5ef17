// The plans of the shard-local layers without MPI: every rank of grids
// splitting samples, space and channels, with uneven and empty shards:
// plain layouts of the right distributions, shards that tile each tensor,
// the loss's reductions, comparison, description and bad input.
#include "layers/shard_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

struct Case {
  std::string name;
  Shape shape;
  Shape grid;
};

std::vector<Case> cases() {
  return {
      {"samples", {4, 3, 6, 5}, {4, 1, 1, 1}},
      // 7 rows over 3 parts, 3 samples over 4 parts (one part empty).
      {"height_uneven", {2, 4, 7, 6}, {1, 1, 3, 1}},
      {"samples_empty", {3, 2, 4, 4}, {4, 1, 1, 1}},
      {"hybrid", {4, 2, 9, 8}, {2, 1, 2, 2}},
      {"hybrid_3d", {2, 3, 5, 4, 6}, {2, 1, 1, 2, 1}},
      {"channels", {2, 6, 5, 4}, {1, 3, 2, 1}},
      {"channels_uneven", {1, 5, 4, 4}, {1, 2, 1, 2}},
  };
}

bool splits_channels(const Case& c) { return c.grid[1] > 1; }

HaloLayout plain(const Distribution& d) {
  return HaloLayout(d).with_storage(StorageOrder::kChannelsLast);
}

// Every tensor of the plans of all ranks: plain layouts of the same
// distribution on every rank, each rank's shard that distribution's, and
// the shards tile the global tensor.
void ExpectShardsTile(const std::function<ShardPlan(int)>& plan_of, int parts) {
  const ShardPlan first = plan_of(0);
  for (size_t t = 0; t < first.tensors.size(); ++t) {
    const Distribution& dist = first.tensors[t].layout.distribution();
    Index volume = 0;
    for (int r = 0; r < parts; ++r) {
      const ShardPlan p = plan_of(r);
      EXPECT_EQ(p.rank, r);
      ASSERT_EQ(p.tensors.size(), first.tensors.size());
      const ShardTensor& tensor = p.tensors[t];
      EXPECT_EQ(tensor.name, first.tensors[t].name);
      EXPECT_EQ(tensor.layout, plain(dist)) << tensor.name;
      EXPECT_EQ(p.shard(tensor.name), dist.shard(r)) << tensor.name;
      volume += p.shard(tensor.name).volume();
    }
    EXPECT_EQ(volume, dist.global_shape().volume()) << first.tensors[t].name;
  }
}

TEST(ShardPlan, ActivationSoftmaxAndUpsampleOnEveryRank) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution src(c.shape, c.grid);
    const int parts = src.num_parts();
    ExpectShardsTile(
        [&](int r) { return plan_activation(ActivationDesc::relu(), src, r); },
        parts);
    EXPECT_EQ(plan_activation(ActivationDesc::relu(), src, 0).layout("dst"),
              plain(src));
    const UpsampleDesc up{Shape::filled(c.shape.ndims() - 2, 2)};
    ExpectShardsTile([&](int r) { return plan_upsample(up, src, r); }, parts);
    for (int r = 0; r < parts; ++r) {
      // The output shard is the input shard scaled: no communication.
      const ShardPlan p = plan_upsample(up, src, r);
      Box want = src.shard(r);
      for (int d = 2; d < c.shape.ndims(); ++d) {
        want.lower[d] *= 2;
        want.extent[d] *= 2;
      }
      EXPECT_EQ(p.shard("dst"), want);
      EXPECT_FALSE(p.communicates());
    }
    if (splits_channels(c)) {
      EXPECT_THROW(plan_softmax(src, 0), Error);
      continue;
    }
    ExpectShardsTile([&](int r) { return plan_softmax(src, r); }, parts);
    EXPECT_EQ(plan_softmax(src, 0, {SoftmaxKind::kLogSoftmax}).layer,
              "log-softmax");
  }
}

TEST(ShardPlan, ConcatAndSliceOnEveryRank) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Distribution a(c.shape, c.grid);
    Shape wider = c.shape;
    wider[1] += 2;
    const Distribution b(wider, c.grid);
    if (splits_channels(c)) {
      try {
        plan_concat({a, b}, 0);
        ADD_FAILURE() << "a grid splitting channels was accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      }
      EXPECT_THROW(plan_slice({0, 1}, a, 0), Error);
      continue;
    }
    ExpectShardsTile(
        [&](int r) {
          return plan_concat({a, b, a}, r);
        },
        a.num_parts());
    const ShardPlan cat = plan_concat({a, b, a}, 0);
    EXPECT_EQ(cat.layout("dst").distribution().global_shape()[1],
              2 * c.shape[1] + wider[1]);
    EXPECT_EQ(concat_offsets(cat),
              (std::vector<Index>{0, c.shape[1], c.shape[1] + wider[1],
                                  2 * c.shape[1] + wider[1]}));
    EXPECT_EQ(cat.layout("src1"), plain(b));
    const ChannelRange range{1, wider[1] - 1};
    ExpectShardsTile([&](int r) { return plan_slice(range, b, r); },
                     b.num_parts());
    EXPECT_EQ(
        plan_slice(range, b, 0).layout("dst").distribution().global_shape()[1],
        range.size());
  }
}

// The loss's sums: the ranks holding a rank's samples, then one rank per
// sample block; the sets of all ranks agree (a partition of the ranks).
TEST(ShardPlan, LossReductionsPartitionTheRanks) {
  for (const Case& c : cases()) {
    if (splits_channels(c)) continue;
    SCOPED_TRACE(c.name);
    const Distribution prediction(c.shape, c.grid);
    const int parts = prediction.num_parts();
    const LossDesc desc = LossDesc::make(LossKind::kCrossEntropyIndices);
    ExpectShardsTile([&](int r) { return plan_loss(desc, prediction, r); },
                     parts);
    EXPECT_EQ(plan_loss(desc, prediction, 0)
                  .layout("target")
                  .distribution()
                  .global_shape()[1],
              1);
    for (size_t k = 0; k < 3; ++k) {
      std::set<std::vector<int>> sets;
      int members = 0;
      for (int r = 0; r < parts; ++r) {
        const ShardPlan p = plan_loss(desc, prediction, r);
        ASSERT_EQ(p.reductions.size(), 3u);
        const ShardReduction& red = p.reductions[k];
        EXPECT_NE(std::find(red.ranks.begin(), red.ranks.end(), r),
                  red.ranks.end());
        for (int q : red.ranks) {
          const Shape mine = prediction.part_coord(r);
          const Shape theirs = prediction.part_coord(q);
          for (int d = 0; d < mine.ndims(); ++d) {
            if (k == 0 && d == 0) EXPECT_EQ(theirs[d], mine[d]);
            if (k == 1 && d != 0) EXPECT_EQ(theirs[d], mine[d]);
          }
        }
        if (sets.insert(red.ranks).second) members += red.ranks.size();
      }
      EXPECT_EQ(members, parts) << "reduction " << k;
    }
    const ShardPlan p = plan_loss(desc, prediction, parts - 1);
    EXPECT_EQ(p.reductions[0].values,
              2 * prediction.shard(parts - 1).extent[0] + 1);
    EXPECT_EQ(p.communicates(), parts > 1);
    // Value targets: no backward sum, the prediction's distribution.
    const ShardPlan mse =
        plan_loss(LossDesc::make(LossKind::kMeanSquaredError), prediction, 0);
    EXPECT_EQ(mse.reductions.size(), 2u);
    EXPECT_EQ(mse.layout("target"), plain(prediction));
  }
}

TEST(ShardPlan, ComparesAndDescribes) {
  const Distribution src(Shape{2, 4, 7, 6}, Shape{1, 1, 3, 1});
  const UpsampleDesc up{Shape{2, 2}};
  EXPECT_EQ(plan_upsample(up, src, 1), plan_upsample(up, src, 1));
  EXPECT_NE(plan_upsample(up, src, 1), plan_upsample(up, src, 2));
  EXPECT_NE(plan_upsample(up, src, 1),
            plan_upsample(UpsampleDesc{Shape{1, 2}}, src, 1));
  EXPECT_NE(plan_activation(ActivationDesc::relu(), src, 0),
            plan_softmax(src, 0));
  const std::string text = plan_upsample(up, src, 1).describe();
  EXPECT_NE(text.find("upsample on rank 1: src "), std::string::npos) << text;
  EXPECT_NE(text.find("dst "), std::string::npos) << text;
  const std::string loss =
      plan_loss(LossDesc::make(LossKind::kCrossEntropyIndices), src, 2)
          .describe();
  EXPECT_NE(loss.find("forward: sum of "), std::string::npos) << loss;
  EXPECT_NE(loss.find("over ranks {0, 1, 2}"), std::string::npos) << loss;
}

TEST(ShardPlan, BadInputThrowsClearErrors) {
  const Distribution src(Shape{2, 4, 8, 6}, Shape{1, 1, 2, 1});
  auto kind_of = [](const std::function<void()>& f) {
    std::optional<ErrorKind> kind;
    try {
      f();
    } catch (const Error& e) {
      kind = e.kind();
    }
    return kind;
  };
  EXPECT_EQ(kind_of([&] { plan_softmax(src, 2); }),
            ErrorKind::kInvalidArgument);  // no such rank
  EXPECT_EQ(kind_of([&] { plan_upsample(UpsampleDesc{Shape{2}}, src, 0); }),
            ErrorKind::kShapeMismatch);  // one factor for two dimensions
  EXPECT_EQ(kind_of([&] { plan_concat({}, 0); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of([&] {
              plan_concat(
                  {src, Distribution(Shape{2, 4, 8, 6}, Shape{1, 1, 1, 2})}, 0);
            }),
            ErrorKind::kShapeMismatch);
  EXPECT_EQ(kind_of([&] {
              plan_slice({3, 5}, src, 0);
            }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of([&] {
              plan_activation(ActivationDesc::relu(),
                              Distribution(Shape{2, 4}, Shape{1, 1}), 0);
            }),
            ErrorKind::kShapeMismatch);
  try {
    plan_softmax(src, 0).tensor("weights");
    ADD_FAILURE() << "an unknown tensor was found";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no tensor \"weights\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace distconv
