// make_kernel's compile-time check: the host kernels have their layer's
// interface (KernelInterface<Call>::passes), and kernels that lack a pass,
// name it differently or take another space's or element type's views do
// not; make_kernel makes the space's kernel from the context and the call.
#include "layers/internal/space_kernel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/local_batch_norm.h"
#include "kernels/local_loss.h"
#include "kernels/local_pool.h"
#include "kernels/local_softmax.h"
#include "layers/internal/batch_norm_impl.h"
#include "layers/internal/loss_impl.h"
#include "layers/internal/pooling_impl.h"
#include "layers/internal/softmax_impl.h"

namespace distconv::internal {
namespace {

struct OtherSpace {};  // a memory space whose views the host kernels refuse

// A softmax kernel of the right shape, and three that are not.
template <typename T>
struct GoodSoftmax {
  void forward(const StridedView<const T>&, const StridedView<T>&) const {}
  void backward(const StridedView<const T>&, const StridedView<const T>&,
                const StridedView<T>&) const {}
  std::string describe() const { return "stand-in"; }
};
template <typename T>
struct NoBackward {
  void forward(const StridedView<const T>&, const StridedView<T>&) const {}
  std::string describe() const { return "stand-in"; }
};
template <typename T>
struct NoDescribe {
  void forward(const StridedView<const T>&, const StridedView<T>&) const {}
  void backward(const StridedView<const T>&, const StridedView<const T>&,
                const StridedView<T>&) const {}
};
template <typename T>
struct ForwardWritesSrc {  // src a writable view: the layer's is read-only
  void forward(const StridedView<T>&, const StridedView<T>&) const {}
  void backward(const StridedView<const T>&, const StridedView<const T>&,
                const StridedView<T>&) const {}
  std::string describe() const { return "stand-in"; }
};
static_assert(
    kHasInterface<SoftmaxKernelCall, LocalSoftmax<float>, float, HostSpace>);
static_assert(
    kHasInterface<SoftmaxKernelCall, LocalSoftmax<bf16>, bf16, HostSpace>);
static_assert(
    kHasInterface<SoftmaxKernelCall, GoodSoftmax<double>, double, HostSpace>);
static_assert(
    !kHasInterface<SoftmaxKernelCall, NoBackward<float>, float, HostSpace>);
static_assert(
    !kHasInterface<SoftmaxKernelCall, NoDescribe<float>, float, HostSpace>);
static_assert(!kHasInterface<SoftmaxKernelCall, ForwardWritesSrc<float>, float,
                             HostSpace>);
static_assert(
    !kHasInterface<SoftmaxKernelCall, LocalSoftmax<float>, float, OtherSpace>);
// Another element type's kernel: its views do not convert.
static_assert(
    !kHasInterface<SoftmaxKernelCall, LocalSoftmax<float>, double, HostSpace>);

// The loss: both kinds of target.
template <typename T>
struct IndicesOnlyLoss {
  std::vector<double> sums(LossTerms, const StridedView<const T>&,
                           const StridedView<const std::int64_t>&) const;
  void gradient(double, const StridedView<const T>&,
                const StridedView<const std::int64_t>&,
                const StridedView<T>&) const;
  std::vector<double> sums_and_gradient(double, const StridedView<const T>&,
                                        const StridedView<const std::int64_t>&,
                                        const StridedView<T>&) const;
};
static_assert(kHasInterface<LossCellDesc, LocalLoss<float>, float, HostSpace>);
static_assert(kHasInterface<LossCellDesc, LocalLoss<fp16>, fp16, HostSpace>);
static_assert(
    !kHasInterface<LossCellDesc, IndicesOnlyLoss<float>, float, HostSpace>);
static_assert(
    !kHasInterface<LossCellDesc, LocalLoss<float>, float, OtherSpace>);

// Pooling names its implementation (implementation(), not describe()).
static_assert(
    kHasInterface<PoolKernelCall, LocalPool<float>, float, HostSpace>);
static_assert(
    !kHasInterface<PoolKernelCall, GoodSoftmax<float>, float, HostSpace>);
static_assert(
    !kHasInterface<PoolKernelCall, LocalPool<float>, float, OtherSpace>);

// Batch normalisation's passes on raw arrays; its implementation() is a
// static member (the layer names it without a kernel).
struct NoDiffSrc {
  void moments(const float*, Index, double*, double*);
  void affine(const float*, Index, const double*, const double*, const double*,
              float*);
  void gradient_sums(const float*, const float*, Index, const double*, double*,
                     double*);
  static std::string implementation() { return "stand-in"; }
};
static_assert(kHasInterface<BatchNormKernelCall, LocalBatchNorm<float>, float,
                            HostSpace>);
static_assert(
    kHasInterface<BatchNormKernelCall, LocalBatchNorm<bf16>, bf16, HostSpace>);
static_assert(!kHasInterface<BatchNormKernelCall, NoDiffSrc, float, HostSpace>);
static_assert(!kHasInterface<BatchNormKernelCall, LocalBatchNorm<float>, double,
                             HostSpace>);

}  // namespace

// A space's kernel for the stand-in call, made by make_kernel.
struct StandInCall {
  int value;
};
template <>
struct KernelInterface<StandInCall> {
  template <typename K, typename T, typename Space>
  using passes = decltype(std::declval<const K&>().value());
};
struct StandInKernel {
  int made_with;
  int value() const { return made_with; }
};
template <typename T>
struct SpaceKernel<StandInCall, T, HostSpace> {
  using type = StandInKernel;
  static type make(const Exec<HostSpace>&, const StandInCall& c) {
    return {c.value};
  }
};

TEST(SpaceKernel, MakeKernelMakesTheSpacesKernelFromTheCall) {
  const StandInKernel k = make_kernel<float>(Exec<HostSpace>(), StandInCall{7});
  EXPECT_EQ(k.value(), 7);
}

}  // namespace distconv::internal
