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
// The ReLU writes straight into the tensor the caller hands it, in any
// layout of dst_distribution() (halos of the next convolution or pooling
// included), so no copy joins the block to what follows. Backward reads
// dy's shard in any layout too; diff_src, when wanted, has
// diff_src_layout().
#ifndef DISTCONV_EXAMPLES_CONV_BLOCK_H_
#define DISTCONV_EXAMPLES_CONV_BLOCK_H_

#include <vector>

#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "distconv/dist_tensor.h"
#include "examples/training.h"

namespace distconv {
namespace examples {

// Defined for float and bf16 (fp32 parameters either way).
template <typename T>
class ConvBnRelu {
 public:
  // Weights start He-uniform from `seed`; scale 1, shift 0.
  ConvBnRelu(const ProcessGrid& grid, const ConvDesc& desc,
             const Distribution& src, unsigned seed);

  const HaloLayout& src_layout() const { return conv_.src_layout(); }
  const HaloLayout& diff_src_layout() const { return conv_.diff_src_layout(); }
  const Distribution& dst_distribution() const {
    return bn_.dst_layout().distribution();
  }

  void forward(DistTensor<T>& src, DistTensor<T>& dst);
  // Gradients into params()' grad; diff_src skipped when null.
  void backward(const DistTensor<T>& src, const DistTensor<T>& diff_dst,
                DistTensor<T>* diff_src);

  std::vector<Param*> params() { return {&weights_, &scale_, &shift_}; }
  BatchNorm<T>& batch_norm() { return bn_; }
  // Adds the convolution's blocked time since the last call to `wait`
  // (batch norm's allreduces are blocking calls, counted as compute).
  void take_comm_wait(CommWait* wait) { wait->take(conv_); }

 private:
  Convolution<T> conv_;
  BatchNorm<T> bn_;
  Activation<T> relu_;
  Param weights_, scale_, shift_;
  DistTensor<T> conv_out_, bn_out_, d_bn_, d_conv_out_;
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_CONV_BLOCK_H_
