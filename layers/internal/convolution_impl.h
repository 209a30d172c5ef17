// Internal: the convolution's executor, Convolution<T, Space> (see
// layers/convolution.h), written once for every memory space: what it
// takes from a space (its kernels and collectives,
// layers/internal/conv_kernels.h, and the primitives on its Exec) runs the
// plan's leaves there.
//
// The orchestration (pieces, halos started before the interior and waited
// for before the boundary, channel collectives, the gradient allreduce
// overlapping backward-data) is the executor's state and passes,
// Convolution<T, Space>::Impl (layers/internal/convolution_resources.h),
// the same for every space; this file defines the layer's members over it.
// Included by the .cc that instantiates the layer for a space with its
// kernels: layers/convolution.cc (host), layers/device_convolution.cc
// (GPU).
#ifndef DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_
#define DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_

#include <string>

#include "distconv/error.h"
#include "layers/convolution.h"
#include "layers/internal/convolution_resources.h"

namespace distconv {

template <typename T, typename Space>
Convolution<T, Space>::Convolution(const ProcessGrid& grid,
                                   const ConvDesc& desc,
                                   const Distribution& src,
                                   const ConvolutionOptions& options,
                                   const Exec<Space>& exec)
    : Convolution(grid,
                  internal::plan_collectively(
                      grid,
                      [&] {
                        internal::check_grid(src, grid.shape(), "input");
                        return plan_convolution(desc, src, grid.rank(),
                                                options);
                      }),
                  options.halo, options.gpu, options.cpu, exec) {}

template <typename T, typename Space>
Convolution<T, Space>::Convolution(const ProcessGrid& grid, ConvPlan plan,
                                   const HaloSetupOptions& halo,
                                   const GpuConvOptions& gpu,
                                   const CpuConvOptions& cpu,
                                   const Exec<Space>& exec) {
  // Checked together: a plan made for another rank or grid on one rank
  // throws on every rank, before any collective.
  internal::check_given_plan(
      grid, plan.src_layout.distribution(), plan.rank,
      internal::layer_fingerprint<T, Space>(plan), [&] {
        require(plan.transport == halo.transport, ErrorKind::kInvalidArgument,
                "the convolution was planned for another halo transport "
                "than the one given");
        require(plan.search == cpu.search, ErrorKind::kInvalidArgument,
                "the convolution was planned for another kernel choice "
                "than the one given");
      });
  impl_ = internal::Pimpl<Impl>::make("convolution", grid, std::move(plan),
                                      halo, gpu, cpu, exec);
}

template <typename T, typename Space>
const ConvGeometry& Convolution<T, Space>::geometry() const {
  return impl().plan.geometry;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::src_layout() const {
  return impl().plan.src_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::dst_layout() const {
  return impl().plan.dst_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::diff_dst_layout() const {
  return impl().plan.diff_dst_layout;
}
template <typename T, typename Space>
const HaloLayout& Convolution<T, Space>::diff_src_layout() const {
  return impl().plan.diff_src_layout;
}
template <typename T, typename Space>
const ConvPlan& Convolution<T, Space>::plan() const {
  return impl().plan;
}
template <typename T, typename Space>
const ConvStats& Convolution<T, Space>::stats() const {
  return impl().stats;
}
template <typename T, typename Space>
void Convolution<T, Space>::reset_stats() {
  impl().stats = ConvStats{};
}

template <typename T, typename Space>
const Box& Convolution<T, Space>::weights_block() const {
  return impl().plan.weights_block;
}
template <typename T, typename Space>
const Box& Convolution<T, Space>::bias_block() const {
  return impl().plan.bias_block;
}

template <typename T, typename Space>
void Convolution<T, Space>::forward(DistTensor<T, Space>& src,
                                    const Param* weights, const Param* bias,
                                    DistTensor<T, Space>& dst) {
  Impl& s = impl();
  s.check_forward(src, nullptr, weights, bias, dst);
  s.forward(src, nullptr, weights, bias, dst);
}

template <typename T, typename Space>
void Convolution<T, Space>::forward(const DistTensor<T, Space>& src,
                                    DistTensor<T, Space>& src_frame,
                                    const Param* weights, const Param* bias,
                                    DistTensor<T, Space>& dst) {
  Impl& s = impl();
  s.check_forward(src, &src_frame, weights, bias, dst);
  s.forward(src_frame, &src, weights, bias, dst);
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_data(DistTensor<T, Space>& diff_dst,
                                          const Param* weights,
                                          DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  s.check_data(diff_dst, nullptr, weights, diff_src);
  s.backward_data(diff_dst, nullptr, weights, diff_src);
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_data(const DistTensor<T, Space>& diff_dst,
                                          DistTensor<T, Space>& diff_dst_frame,
                                          const Param* weights,
                                          DistTensor<T, Space>& diff_src) {
  Impl& s = impl();
  s.check_data(diff_dst, &diff_dst_frame, weights, diff_src);
  s.backward_data(diff_dst_frame, &diff_dst, weights, diff_src);
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_weights(
    const DistTensor<T, Space>& src, const DistTensor<T, Space>& diff_dst,
    Param* diff_weights, Param* diff_bias) {
  Impl& s = impl();
  s.check_weights(src, nullptr, diff_dst, diff_weights, diff_bias);
  s.backward_weights(src, nullptr, diff_dst, diff_weights, diff_bias);
}

template <typename T, typename Space>
void Convolution<T, Space>::backward_weights(
    const DistTensor<T, Space>& src, const DistTensor<T, Space>& src_frame,
    const DistTensor<T, Space>& diff_dst, Param* diff_weights,
    Param* diff_bias) {
  Impl& s = impl();
  s.check_weights(src, &src_frame, diff_dst, diff_weights, diff_bias);
  s.backward_weights(src_frame, &src, diff_dst, diff_weights, diff_bias);
}

template <typename T, typename Space>
void Convolution<T, Space>::wait_gradients() {
  Impl& s = impl();
  s.stats.allreduce_wait_s += s.grads->wait();
}

template <typename T, typename Space>
std::string Convolution<T, Space>::describe() const {
  const Impl& s = impl();
  std::string out = s.plan.describe_channels();
  auto lines = [&](const std::vector<ConvPiece>& pieces,
                   const typename Impl::Kernels& kernels) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      out += internal::describe_run(pieces[i], kernels[i]);
    }
  };
  lines(s.plan.forward_early, s.forward_early);
  lines(s.plan.forward_late, s.forward_late);
  lines(s.plan.data_early, s.data_early);
  lines(s.plan.data_late, s.data_late);
  lines(s.plan.weights_early, s.weights_early);
  lines(s.plan.weights_late, s.weights_late);
  return out;
}

}  // namespace distconv

#endif  // DISTCONV_LAYERS_INTERNAL_CONVOLUTION_IMPL_H_
