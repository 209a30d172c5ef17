// A rank that hands a layer a wrong argument during a pass (a tensor of
// another layout, a null array) while the others hand it right ones: every
// rank throws the same distconv::Error, naming that rank, before the pass
// moves any data. Nobody is left waiting for its messages, and the layer
// stays usable: the next pass with right arguments gives the same result
// as the one before the failure. The last rank is the odd one out.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/loss_desc.h"
#include "distconv/pool_desc.h"
#include "distconv/process_grid.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "layers/redistribute.h"
#include "tests/mpi_testing.h"

namespace distconv {
namespace {

using testing::expect_error_on_all_ranks;
using testing::world_rank;
using testing::world_size;

using Tensor = DistTensor<double>;

bool odd_one() { return world_rank() == world_size() - 1; }

std::string on_last_rank() {
  return "(on rank " + std::to_string(world_size() - 1) + ")";
}

// Distinct values everywhere, halos included.
void fill(Tensor& t, double seed) {
  const Shape strides = t.layout().local_strides(t.part());
  t.buffer().for_each([&](const Shape& at, double& v) {
    Index offset = 0;
    for (int d = 0; d < at.ndims(); ++d) offset += at[d] * strides[d];
    v = seed + 0.001 * static_cast<double>(offset % 997) + world_rank();
  });
}

std::vector<double> copy_of(const Tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

// A tensor of `layout` on every rank but the last, where it has one more
// row: what a rank that derived the shape from a local value would pass.
Tensor wrong_on_last(const ProcessGrid& grid, const HaloLayout& layout) {
  if (!odd_one()) return Tensor(grid, layout);
  Shape shape = layout.distribution().global_shape();
  shape[2] += 1;
  return Tensor(grid, HaloLayout(Distribution(shape, grid.shape())));
}

// `pass` on every rank: refused everywhere with the same `kind`, naming
// the last rank.
void expect_refused(ErrorKind kind, const std::function<void()>& pass) {
  expect_error_on_all_ranks(MPI_COMM_WORLD, kind, on_last_rank(), pass);
}

class WrongArgument : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  }
  ProcessGrid grid_{MPI_COMM_WORLD, Shape{1, 1, world_size(), 1}};
  // Uneven rows: the last rank holds one more.
  Distribution src_{Shape{2, 4, 6 * world_size() + 1, 10}, grid_.shape()};
};

TEST_F(WrongArgument, ConvolutionPasses) {
  ConvDesc desc = ConvDesc::make(4, 4, {3, 3});
  desc.padding_lower = desc.padding_upper = {1, 1};
  desc.bias = ConvBias::kAdd;
  Convolution<double> conv(grid_, desc, src_);
  Tensor x(grid_, conv.src_layout()), y(grid_, conv.dst_layout());
  Tensor dy(grid_, conv.diff_dst_layout()), dx(grid_, conv.diff_src_layout());
  std::vector<double> w(conv.weights_block().extent.volume(), 0.25);
  std::vector<double> b(4, 0.5), dw(w.size()), db(b.size());
  fill(x, 1.0);
  fill(dy, 2.0);
  conv.forward(x, w.data(), b.data(), y);
  conv.backward_data(dy, w.data(), dx);
  conv.backward_weights(x, dy, dw.data(), db.data());
  conv.wait_gradients();
  const std::vector<double> y0 = copy_of(y), dx0 = copy_of(dx), dw0 = dw;

  Tensor bad_y = wrong_on_last(grid_, conv.dst_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { conv.forward(x, w.data(), b.data(), bad_y); });
  Tensor bad_dx = wrong_on_last(grid_, conv.diff_src_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { conv.backward_data(dy, w.data(), bad_dx); });
  double* no_db = odd_one() ? nullptr : db.data();
  expect_refused(ErrorKind::kInvalidArgument,
                 [&] { conv.backward_weights(x, dy, dw.data(), no_db); });

  conv.forward(x, w.data(), b.data(), y);
  conv.backward_data(dy, w.data(), dx);
  conv.backward_weights(x, dy, dw.data(), db.data());
  conv.wait_gradients();
  EXPECT_EQ(copy_of(y), y0);
  EXPECT_EQ(copy_of(dx), dx0);
  EXPECT_EQ(dw, dw0);
}

// Channel parallelism gathers the input before anything else: the
// agreement comes first there too.
TEST_F(WrongArgument, ConvolutionOverChannels) {
  if (world_size() % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  const ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 2, world_size() / 2, 1});
  const Distribution src(Shape{2, 4, 3 * world_size(), 8}, grid.shape());
  ConvDesc desc = ConvDesc::make(4, 4, {3, 3});
  desc.padding_lower = desc.padding_upper = {1, 1};
  Convolution<double> conv(grid, desc, src);
  Tensor x(grid, conv.src_layout()), y(grid, conv.dst_layout());
  std::vector<double> w(conv.weights_block().extent.volume(), 0.5);
  fill(x, 3.0);
  conv.forward(x, w.data(), nullptr, y);
  const std::vector<double> y0 = copy_of(y);

  Tensor bad_x = wrong_on_last(grid, conv.src_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { conv.forward(bad_x, w.data(), nullptr, y); });
  conv.forward(x, w.data(), nullptr, y);
  EXPECT_EQ(copy_of(y), y0);
}

TEST_F(WrongArgument, TransposedConvolution) {
  DeconvDesc desc = DeconvDesc::make(4, 4, {2, 2});
  desc.stride = {2, 2};
  Deconvolution<double> deconv(grid_, desc, src_);
  Tensor x(grid_, deconv.src_layout()), y(grid_, deconv.dst_layout());
  std::vector<double> w(desc.weights_shape().volume(), 0.25);
  fill(x, 1.0);
  deconv.forward(x, w.data(), nullptr, y);
  const std::vector<double> y0 = copy_of(y);

  Tensor bad_x = wrong_on_last(grid_, deconv.src_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { deconv.forward(bad_x, w.data(), nullptr, y); });
  const double* no_w = odd_one() ? nullptr : w.data();
  expect_refused(ErrorKind::kInvalidArgument,
                 [&] { deconv.forward(x, no_w, nullptr, y); });
  deconv.forward(x, w.data(), nullptr, y);
  EXPECT_EQ(copy_of(y), y0);
}

TEST_F(WrongArgument, Pooling) {
  PoolDesc desc = PoolDesc::make(PoolKind::kMax, {3, 3});
  desc.padding_lower = desc.padding_upper = {1, 1};
  Pooling<double> pool(grid_, desc, src_);
  Tensor x(grid_, pool.src_layout()), y(grid_, pool.dst_layout());
  Tensor dy(grid_, pool.diff_dst_layout()), dx(grid_, pool.diff_src_layout());
  fill(x, 1.0);
  fill(dy, 2.0);
  pool.forward(x, y);
  pool.backward(x, dy, dx);
  const std::vector<double> y0 = copy_of(y), dx0 = copy_of(dx);

  Tensor bad_y = wrong_on_last(grid_, pool.dst_layout());
  expect_refused(ErrorKind::kShapeMismatch, [&] { pool.forward(x, bad_y); });
  Tensor bad_dy = wrong_on_last(grid_, pool.diff_dst_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { pool.backward(x, bad_dy, dx); });
  pool.forward(x, y);
  pool.backward(x, dy, dx);
  EXPECT_EQ(copy_of(y), y0);
  EXPECT_EQ(copy_of(dx), dx0);
}

TEST_F(WrongArgument, BatchNorm) {
  BatchNormOptions options;
  options.stats = BatchNormStats::kGlobal;
  BatchNorm<double> bn(grid_, src_, options);
  Tensor x(grid_, bn.src_layout()), y(grid_, bn.dst_layout());
  Tensor dy(grid_, bn.diff_dst_layout()), dx(grid_, bn.diff_src_layout());
  std::vector<double> scale(4, 1.5), shift(4, 0.5), dscale(4), dshift(4);
  fill(x, 1.0);
  fill(dy, 2.0);
  bn.forward(x, scale.data(), shift.data(), y);
  const std::vector<double> mean0 = bn.running_mean();
  bn.backward(x, dy, scale.data(), dx, dscale.data(), dshift.data());
  const std::vector<double> dx0 = copy_of(dx), dscale0 = dscale;

  Tensor bad_y = wrong_on_last(grid_, bn.dst_layout());
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { bn.forward(x, scale.data(), shift.data(), bad_y); });
  // Nothing ran: the running statistics are those of the first forward.
  EXPECT_EQ(bn.running_mean(), mean0);
  double* no_dshift = odd_one() ? nullptr : dshift.data();
  expect_refused(ErrorKind::kInvalidArgument, [&] {
    bn.backward(x, dy, scale.data(), dx, dscale.data(), no_dshift);
  });
  bn.backward(x, dy, scale.data(), dx, dscale.data(), dshift.data());
  EXPECT_EQ(copy_of(dx), dx0);
  EXPECT_EQ(dscale, dscale0);
}

TEST_F(WrongArgument, Redistribution) {
  const ProcessGrid columns(MPI_COMM_WORLD, Shape{1, 1, 1, world_size()});
  const HaloLayout from(src_);
  const HaloLayout to(Distribution(src_.global_shape(), columns.shape()));
  Redistribution<double> move(grid_, from, columns, to);
  Tensor x(grid_, from), y(columns, to), back(grid_, from);
  fill(x, 1.0);
  move.forward(x, y);
  const std::vector<double> y0 = copy_of(y);

  Tensor bad_y = wrong_on_last(columns, to);
  expect_refused(ErrorKind::kShapeMismatch, [&] { move.forward(x, bad_y); });
  Tensor bad_back = wrong_on_last(grid_, from);
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { move.backward(y, bad_back); });
  move.forward(x, y);
  EXPECT_EQ(copy_of(y), y0);
  move.backward(y, back);
  EXPECT_EQ(copy_of(back), copy_of(x));
}

TEST_F(WrongArgument, Loss) {
  Loss<double> loss(grid_, LossDesc::make(LossKind::kMeanSquaredError), src_);
  Tensor p(grid_, HaloLayout(src_)), t(grid_, HaloLayout(src_));
  Tensor dp(grid_, HaloLayout(src_));
  fill(p, 1.0);
  fill(t, 1.5);
  const double l0 = loss.forward(p, t);

  Tensor bad_t = wrong_on_last(grid_, HaloLayout(src_));
  expect_refused(ErrorKind::kShapeMismatch, [&] { loss.forward(p, bad_t); });
  Tensor bad_dp = wrong_on_last(grid_, HaloLayout(src_));
  expect_refused(ErrorKind::kShapeMismatch,
                 [&] { loss.backward(p, t, bad_dp); });
  EXPECT_EQ(loss.forward(p, t), l0);
}

}  // namespace
}  // namespace distconv
