// ConvBnRelu: the examples' building block, convolution (no bias) -> batch
// norm (global statistics) -> ReLU, with its parameters and the tensors it
// keeps between forward and backward.
//
//   ConvBnRelu<float> block(grid, same_conv(16, 32, {3, 3}),   // networks.h
//                    src_dist, /*seed=*/3);
//   DistTensor<float> x(grid, block.src_layout());
//   DistTensor<float> y(grid, next.src_layout());   // the next layer's
//   block.forward(x, y);           // y's shard = relu(bn(conv(x)))
//   block.backward(x, dy, &dx);    // dy: any layout of dst_distribution()
//   sgd.step(block.params());
//
// ConvBnRelu<float, DeviceSpace> runs on GPU memory: before a step each
// params_in() entry's upload(), after it download().
//
// The ReLU writes straight into the tensor the caller hands it, in any
// layout of dst_distribution() (halos of the next convolution or pooling
// included), so no copy joins the block to what follows. Backward reads
// dy's shard in any layout too; diff_src, when wanted, has
// diff_src_layout().
//
// In host memory the batch norm computes the ReLU in the same sweep
// (BnRelu::kFused, BatchNormOptions::activation): one pass over memory
// forward instead of two, and backward differentiates through both from
// the batch norm's input, so no ReLU output is kept; its output goes
// straight into dst where dst has the batch norm's layout (else through a
// copy). BnRelu::kSeparate, and device memory, run the two layers.
//
// In host memory the convolution reads in place (ConvInput::kInPlace,
// where its plan allows: channels not split): src_layout() is then the
// shard's, with no halos, and the block keeps the frames for the halos of
// x and of the batch norm's input gradient, which the convolution's
// backward passes read where it is, with no copy into a buffer with halos.
#ifndef DISTCONV_EXAMPLES_CONV_BLOCK_H_
#define DISTCONV_EXAMPLES_CONV_BLOCK_H_

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/dist_tensor.h"
#include "examples/training.h"
#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "layers/pooling.h"
#include "layers/profile_work.h"

namespace distconv {
namespace examples {

// The options of a convolution or transposed convolution (Options) in
// Space whose CPU kernels `kernels` chooses (host memory; the GPU's layers
// keep cuDNN's choice).
template <typename Options, typename Space>
Options with_kernels(const CpuConvOptions& kernels) {
  Options o;
  if (std::is_same_v<Space, HostSpace>) o.cpu = kernels;
  return o;
}

// A pooling's options in Space whose CPU kernels are chosen as `kernels`
// says (measured: timed when the layer is made, kernels/pool_impl.h,
// or taken from the convolutions' cache).
template <typename Space>
PoolingOptions pooling_with_kernels(const CpuConvOptions& kernels) {
  PoolingOptions o;
  if (std::is_same_v<Space, HostSpace>) {
    o.search = kernels.search;
    o.timing.cache = kernels.cache;
  }
  return o;
}

// In host or device memory (float, bf16; fp32 parameters either way): the
// layers, tensors and the parameters' copies in Space, the parameters
// themselves (params()) on the host.
template <typename T, typename Space = HostSpace>
class ConvBnRelu {
 public:
  // Weights start He-uniform from `seed`; scale 1, shift 0. `kernels`:
  // how the convolution chooses its kernels in host memory; `bn_relu`:
  // whether batch norm and ReLU run fused there.
  ConvBnRelu(const ProcessGrid& grid, const ConvDesc& desc,
             const Distribution& src, unsigned seed,
             const CpuConvOptions& kernels = {},
             BnRelu bn_relu = BnRelu::kFused)
      : conv_(grid, desc, src, conv_options(kernels)),
        bn_(grid, conv_.dst_layout().distribution(), bn_options(bn_relu)),
        relu_(grid, ActivationDesc::relu(), bn_.dst_layout().distribution()),
        weights_(desc.weights_shape().volume()),
        scale_(desc.out_channels),
        shift_(desc.out_channels),
        weights_in_(&weights_),
        scale_in_(&scale_),
        shift_in_(&shift_),
        conv_out_(grid, conv_.dst_layout()),
        d_bn_(grid, bn_.diff_src_layout()),
        grid_(&grid) {
    if (!fused()) bn_out_.emplace(grid, bn_.dst_layout());
    if (!in_place()) d_conv_out_.emplace(grid, conv_.diff_dst_layout());
    const Shape w = desc.weights_shape();
    const double fan_in = static_cast<double>(w.volume() / w[0]);
    weights_.init_uniform(std::sqrt(6.0 / fan_in), seed);
    scale_.fill(1.0f);
    shift_.fill(0.0f);
    if (in_place()) {
      src_shard_ = HaloLayout(src).with_storage(StorageOrder::kChannelsLast);
      x_frame_.emplace(grid, conv_.src_layout());
      dy_frame_.emplace(grid, conv_.diff_dst_layout());
    }
  }

  // The input's: the shard's (no halos) where the convolution reads in
  // place, else with the convolution's halos.
  const HaloLayout& src_layout() const {
    return in_place() ? *src_shard_ : conv_.src_layout();
  }
  const HaloLayout& diff_src_layout() const { return conv_.diff_src_layout(); }
  const Distribution& dst_distribution() const {
    return bn_.dst_layout().distribution();
  }

  // dst = relu(bn(conv(src))), dst in any layout of dst_distribution().
  void forward(DistTensor<T, Space>& src, DistTensor<T, Space>& dst) {
    profiled(profile_, names_.conv, kFwd, conv_, [&] {
      if (in_place()) {
        conv_.forward(std::as_const(src), *x_frame_, weights_in_.value(),
                      nullptr, conv_out_);
      } else {
        conv_.forward(src, weights_in_.value(), nullptr, conv_out_);
      }
    });
    if (fused()) {
      const bool direct = dst.layout() == bn_.dst_layout();
      DistTensor<T, Space>& y = direct ? dst : bn_out();
      profiled(profile_, names_.bn, kFwd, bn_, [&] {
        bn_.forward(conv_out_, scale_in_.value(), shift_in_.value(), y);
      });
      if (!direct) {
        profiled(profile_, names_.copy, kFwd, {},
                 [&] { copy_shard(std::as_const(y), dst); });
      }
      return;
    }
    profiled(profile_, names_.bn, kFwd, bn_, [&] {
      bn_.forward(conv_out_, scale_in_.value(), shift_in_.value(), bn_out());
    });
    profiled(profile_, names_.relu, kFwd, relu_,
             [&] { relu_.forward(bn_out(), dst); });
  }
  // Gradients into params()' copies in Space (download() brings them to
  // the params); diff_src skipped when null.
  void backward(const DistTensor<T, Space>& src,
                const DistTensor<T, Space>& diff_dst,
                DistTensor<T, Space>* diff_src) {
    if (fused()) {
      const bool direct = diff_dst.layout() == bn_.diff_dst_layout();
      if (!direct) {
        profiled(profile_, names_.copy, kData, {},
                 [&] { copy_shard(diff_dst, d_bn_); });
      }
      profiled(profile_, names_.bn, kData, bn_, [&] {
        bn_.backward(conv_out_, direct ? diff_dst : std::as_const(d_bn_),
                     scale_in_.value(), d_bn_, scale_in_.grad(),
                     shift_in_.grad());
      });
    } else {
      profiled(profile_, names_.relu, kData, relu_,
               [&] { relu_.backward(bn_out(), diff_dst, d_bn_); });
      profiled(profile_, names_.bn, kData, bn_, [&] {
        bn_.backward(conv_out_, d_bn_, scale_in_.value(), d_bn_,
                     scale_in_.grad(), shift_in_.grad());
      });
    }
    if (in_place()) {
      // The convolution reads d_bn_ where it is, its halos in a frame.
      profiled(profile_, names_.conv, kWeights, conv_, [&] {
        conv_.backward_weights(src, *x_frame_, d_bn_, weights_in_.grad(),
                               nullptr);
      });
      if (diff_src) {
        profiled(profile_, names_.conv, kData, conv_, [&] {
          conv_.backward_data(std::as_const(d_bn_), *dy_frame_,
                              weights_in_.value(), *diff_src);
        });
      }
    } else {
      profiled(profile_, names_.copy, kData, {}, [&] {
        copy_shard(d_bn_, *d_conv_out_);  // into the layout with halos
      });
      profiled(profile_, names_.conv, kWeights, conv_, [&] {
        conv_.backward_weights(src, *d_conv_out_, weights_in_.grad(), nullptr);
      });
      if (diff_src) {
        profiled(profile_, names_.conv, kData, conv_, [&] {
          conv_.backward_data(*d_conv_out_, weights_in_.value(), *diff_src);
        });
      }
    }
    profiled_wait(profile_, names_.conv, conv_,
                  [&] { conv_.wait_gradients(); });
  }

  // Times every pass into `profile` (null: none) as "NAME.conv",
  // "NAME.bn", "NAME.relu" and "NAME.copy".
  void set_profile(Profile* profile, const std::string& name) {
    profile_ = profile;
    names_ = {name + ".conv", name + ".bn", name + ".relu", name + ".copy"};
  }

  std::vector<Param*> params() { return {&weights_, &scale_, &shift_}; }
  // The parameters' copies the layers read and write.
  std::vector<const ParamIn<Space>*> params_in() const {
    return {&weights_in_, &scale_in_, &shift_in_};
  }
  BatchNorm<T, Space>& batch_norm() { return bn_; }
  // Adds the convolution's blocked time since the last call to `wait`
  // (batch norm's allreduces are blocking calls, counted as compute).
  void take_comm_wait(CommWait* wait) { wait->take(conv_); }

 private:
  // In place in host memory; the plan says whether it could be.
  static ConvolutionOptions conv_options(const CpuConvOptions& kernels) {
    ConvolutionOptions o;
    if (std::is_same_v<Space, HostSpace>) {
      o.input = ConvInput::kInPlace;
      o.cpu = kernels;
    }
    return o;
  }
  bool in_place() const { return conv_.plan().input == ConvInput::kInPlace; }
  static BatchNormOptions bn_options(BnRelu bn_relu) {
    BatchNormOptions o;
    if (std::is_same_v<Space, HostSpace> && bn_relu == BnRelu::kFused) {
      o.activation = NormActivation::kRelu;
    }
    return o;
  }
  bool fused() const {
    return bn_.options().activation == NormActivation::kRelu;
  }
  // The batch norm's output: the ReLU's input when separate; when fused,
  // made once where dst has another layout.
  DistTensor<T, Space>& bn_out() {
    if (!bn_out_) bn_out_.emplace(*grid_, bn_.dst_layout());
    return *bn_out_;
  }

  Convolution<T, Space> conv_;
  BatchNorm<T, Space> bn_;
  Activation<T, Space> relu_;
  Param weights_, scale_, shift_;
  ParamIn<Space> weights_in_, scale_in_, shift_in_;
  DistTensor<T, Space> conv_out_, d_bn_;
  const ProcessGrid* grid_;
  std::optional<DistTensor<T, Space>> bn_out_;
  // Not in place: d_bn_ copied into the layout with halos.
  std::optional<DistTensor<T, Space>> d_conv_out_;
  // In place: src's shard layout and the frames of x and of d_bn_.
  std::optional<HaloLayout> src_shard_;
  std::optional<DistTensor<T, Space>> x_frame_, dy_frame_;
  Profile* profile_ = nullptr;
  struct Names {
    std::string conv, bn, relu, copy;
  } names_;  // the profile's rows, built once
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_CONV_BLOCK_H_
