#include "examples/conv_block.h"

#include <cmath>

#include "layers/copy_shard.h"

namespace distconv {
namespace examples {

template <typename T>
ConvBnRelu<T>::ConvBnRelu(const ProcessGrid& grid, const ConvDesc& desc,
                          const Distribution& src, unsigned seed)
    : conv_(grid, desc, src),
      bn_(grid, conv_.dst_layout().distribution()),
      relu_(grid, ActivationDesc::relu(), bn_.dst_layout().distribution()),
      weights_(desc.weights_shape().volume()),
      scale_(desc.out_channels),
      shift_(desc.out_channels),
      conv_out_(grid, conv_.dst_layout()),
      bn_out_(grid, bn_.dst_layout()),
      d_bn_(grid, bn_.diff_src_layout()),
      d_conv_out_(grid, conv_.diff_dst_layout()) {
  const Shape w = desc.weights_shape();
  const double fan_in = static_cast<double>(w.volume() / w[0]);
  weights_.init_uniform(std::sqrt(6.0 / fan_in), seed);
  scale_.fill(1.0f);
  shift_.fill(0.0f);
}

template <typename T>
void ConvBnRelu<T>::forward(DistTensor<T>& src, DistTensor<T>& dst) {
  conv_.forward(src, weights_.value.data(), nullptr, conv_out_);
  bn_.forward(conv_out_, scale_.value.data(), shift_.value.data(), bn_out_);
  relu_.forward(bn_out_, dst);
}

template <typename T>
void ConvBnRelu<T>::backward(const DistTensor<T>& src,
                             const DistTensor<T>& diff_dst,
                             DistTensor<T>* diff_src) {
  relu_.backward(bn_out_, diff_dst, d_bn_);
  bn_.backward(conv_out_, d_bn_, scale_.value.data(), d_bn_,
               scale_.grad.data(), shift_.grad.data());
  copy_shard(d_bn_, d_conv_out_);  // into the layout with halos
  conv_.backward_weights(src, d_conv_out_, weights_.grad.data(), nullptr);
  if (diff_src) conv_.backward_data(d_conv_out_, weights_.value.data(), *diff_src);
  conv_.wait_gradients();
}

template class ConvBnRelu<float>;
template class ConvBnRelu<bf16>;

}  // namespace examples
}  // namespace distconv
