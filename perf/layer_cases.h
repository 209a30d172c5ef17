// Every distconv_bench driver's layer as a LayerCase in either memory
// space, built from the options and one problem: the convolution and the
// transposed convolution with bias, pooling, batch normalisation (training,
// scale and shift) and the --eltwise layers. In device memory the work is
// queued on the stream of `exec`, passed to every layer; the parameters get
// the same random values in either space.
//
//   LayerCase<float, DeviceSpace> dev =
//       make_layer_case<float, DeviceSpace>(o, problem, grid,
//                                           Exec<DeviceSpace>(stream));
#ifndef DISTCONV_PERF_LAYER_CASES_H_
#define DISTCONV_PERF_LAYER_CASES_H_

#include <memory>

#include "distconv/dist_tensor.h"
#include "distconv/exec.h"
#include "layers/batch_norm.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "layers/pooling.h"
#include "perf/bench_options.h"
#include "perf/conv_problem.h"
#include "perf/eltwise_case.h"
#include "perf/layer_bench.h"
#include "perf/layer_case.h"
#include "tests/conv_check.h"

namespace distconv {

// The parameters (w, b: random from seeds 2 and 3, as the host drivers')
// and their gradients of a convolution or transposed convolution.
template <typename T>
struct WeightedArrays {
  Compute<T>*w, *b, *dw, *db;
};

template <typename T, typename Space>
WeightedArrays<T> add_weighted_arrays(const Shape& weights, Index bias,
                                      LayerCase<T, Space>* c) {
  return {c->param("w", weights, 2), c->param("b", Shape{bias}, 3),
          c->grad("dw", weights), c->grad("db", Shape{bias})};
}

// The layer's statistics, its describe() and the gradients' wait.
template <typename T, typename Space, typename Layer>
void add_weighted_report(std::shared_ptr<Layer> layer, LayerCase<T, Space>* c) {
  c->wait_gradients = [layer] { layer->wait_gradients(); };
  c->take_wait = [layer] {
    const double s =
        layer->stats().halo_wait_s + layer->stats().allreduce_wait_s;
    layer->reset_stats();
    return s;
  };
  c->plan = layer->describe();
}

// A convolution's or transposed convolution's tensors, parameters and
// passes with buffers with halos (ConvInput::kHaloBuffer).
template <typename T, typename Space, typename Layer>
void add_weighted_passes(std::shared_ptr<Layer> layer, const ProcessGrid& grid,
                         const Shape& weights, Index bias,
                         LayerCase<T, Space>* c) {
  DistTensor<T, Space>& x = c->input("x", grid, layer->src_layout());
  DistTensor<T, Space>& dy = c->input("dy", grid, layer->diff_dst_layout());
  DistTensor<T, Space>& y = c->output("y", grid, layer->dst_layout());
  DistTensor<T, Space>& dx = c->output("dx", grid, layer->diff_src_layout());
  const auto [w, b, dw, db] = add_weighted_arrays(weights, bias, c);
  c->forward = [layer, &x, w = w, b = b, &y] { layer->forward(x, w, b, y); };
  c->backward_weights = [layer, &x, &dy, dw = dw, db = db] {
    layer->backward_weights(x, dy, dw, db);
  };
  c->backward_data = [layer, &dy, w = w, &dx] {
    layer->backward_data(dy, w, dx);
  };
  add_weighted_report(layer, c);
}

// A scratch tensor of `layout` the passes share (the in-place frames).
template <typename T, typename Space>
std::shared_ptr<DistTensor<T, Space>> frame(const ProcessGrid& grid,
                                            const HaloLayout& layout) {
  return std::make_shared<DistTensor<T, Space>>(grid, layout);
}

// --transport for the layers of --device; the host layers a GPU run is
// checked against keep their default.
template <typename Space>
HaloTransport bench_transport(const BenchOptions& o) {
  const bool on_gpu = !Space::kHostAccessible;
  return on_gpu == (o.device == BenchDevice::kGpu) ? o.transport
                                                    : HaloTransport::kDefault;
}

// --input for host layers (in place is host memory only; the GPU's layers
// and the host layers a GPU run is checked against read buffers). The
// --conv driver's host layer is perf/distconv_bench.cc's.
template <typename Space>
ConvInput bench_input(const BenchOptions& o) {
  return Space::kHostAccessible && o.device == BenchDevice::kCpu
             ? o.input
             : ConvInput::kHaloBuffer;
}

// --kernel-choice and --kernel-cache for host layers (the GPU's layers, and
// the host layers a GPU run is checked against, keep the default).
template <typename Space>
CpuConvOptions bench_cpu_options(const BenchOptions& o) {
  return Space::kHostAccessible && o.device == BenchDevice::kCpu
             ? o.cpu
             : CpuConvOptions{};
}

template <typename T, typename Space>
LayerCase<T, Space> make_conv_case(const BenchOptions& o, const ConvProblem& p,
                                   const ProcessGrid& grid,
                                   const Exec<Space>& exec) {
  ConvDesc desc = p.desc;
  desc.bias = ConvBias::kAdd;
  ConvolutionOptions options;
  options.overlap = o.overlap;
  options.channels = o.channels;
  options.channel_blocks = o.channel_blocks;
  options.halo.transport = bench_transport<Space>(o);
  options.gpu.math = o.gpu_math;
  auto conv = std::make_shared<Convolution<T, Space>>(
      grid, desc, Distribution(p.src_shape, grid.shape()), options, exec);
  LayerCase<T, Space> c;
  // A layer splitting channels takes this rank's blocks of the parameters.
  add_weighted_passes(conv, grid, conv->weights_block().extent,
                      conv->bias_block().extent.volume(), &c);
  return c;
}

template <typename T, typename Space>
LayerCase<T, Space> make_deconv_case(const BenchOptions& o,
                                     const ConvProblem& p,
                                     const ProcessGrid& grid,
                                     const Exec<Space>& exec) {
  DeconvDesc desc = deconv_desc(p);
  desc.bias = ConvBias::kAdd;
  DeconvolutionOptions options;
  options.halo.transport = bench_transport<Space>(o);
  options.input = bench_input<Space>(o);
  options.cpu = bench_cpu_options<Space>(o);
  GpuConvOptions gpu;
  gpu.math = o.gpu_math;
  auto deconv = std::make_shared<Deconvolution<T, Space>>(
      grid, desc, Distribution(deconv_src_shape(p), grid.shape()), options, gpu,
      exec);
  LayerCase<T, Space> c;
  if (deconv->plan().input != ConvInput::kInPlace) {
    add_weighted_passes(deconv, grid, desc.weights_shape(), desc.out_channels,
                        &c);
    return c;
  }
  // In place: the output and its gradient in shards without halos, the
  // halos in frames.
  DistTensor<T, Space>& x = c.input("x", grid, deconv->src_layout());
  DistTensor<T, Space>& dy = c.input("dy", grid, deconv->shard_layout());
  DistTensor<T, Space>& y = c.output("y", grid, deconv->shard_layout());
  DistTensor<T, Space>& dx = c.output("dx", grid, deconv->diff_src_layout());
  auto y_frame = frame<T, Space>(grid, deconv->dst_layout());
  auto dy_frame = frame<T, Space>(grid, deconv->diff_dst_layout());
  const auto [w, b, dw, db] =
      add_weighted_arrays(desc.weights_shape(), desc.out_channels, &c);
  c.forward = [deconv, &x, y_frame, w = w, b = b, &y] {
    deconv->forward(x, w, b, y, *y_frame);
  };
  c.backward_weights = [deconv, &x, &dy, dy_frame, dw = dw, db = db] {
    deconv->backward_weights(x, dy, *dy_frame, dw, db);
  };
  c.backward_data = [deconv, &dy, dy_frame, w = w, &dx] {
    deconv->backward_data(dy, *dy_frame, w, dx);
  };
  add_weighted_report(deconv, &c);
  return c;
}

template <typename T, typename Space>
LayerCase<T, Space> make_pool_case(const BenchOptions& o, const ConvProblem& p,
                                   const ProcessGrid& grid,
                                   const Exec<Space>& exec) {
  PoolingOptions options;
  options.halo.transport = bench_transport<Space>(o);
  options.input = bench_input<Space>(o);
  if (Space::kHostAccessible && o.device == BenchDevice::kCpu) {
    options.impl = o.pool_impl;
    options.search = o.cpu.search;
    options.timing.cache = o.cpu.cache;  // --kernel-cache
  }
  auto pool = std::make_shared<Pooling<T, Space>>(
      grid, pool_desc(p, o.alg), Distribution(p.src_shape, grid.shape()),
      options, exec);
  LayerCase<T, Space> c;
  if (options.input == ConvInput::kInPlace) {
    // The input and its gradient in shards without halos, the halos in
    // frames (the input's kept from forward to backward).
    DistTensor<T, Space>& x = c.input("x", grid, pool->shard_layout());
    DistTensor<T, Space>& dy = c.input("dy", grid, pool->diff_dst_layout());
    DistTensor<T, Space>& y = c.output("y", grid, pool->dst_layout());
    DistTensor<T, Space>& dx = c.output("dx", grid, pool->shard_layout());
    auto x_frame = frame<T, Space>(grid, pool->src_layout());
    auto dx_frame = frame<T, Space>(grid, pool->diff_src_layout());
    c.forward = [pool, &x, x_frame, &y] { pool->forward(x, *x_frame, y); };
    c.backward_data = [pool, &x, x_frame, &dy, &dx, dx_frame] {
      pool->backward(x, *x_frame, dy, dx, *dx_frame);
    };
  } else {
    DistTensor<T, Space>& x = c.input("x", grid, pool->src_layout());
    DistTensor<T, Space>& dy = c.input("dy", grid, pool->diff_dst_layout());
    DistTensor<T, Space>& y = c.output("y", grid, pool->dst_layout());
    DistTensor<T, Space>& dx = c.output("dx", grid, pool->diff_src_layout());
    c.forward = [pool, &x, &y] { pool->forward(x, y); };
    c.backward_data = [pool, &x, &dy, &dx] { pool->backward(x, dy, dx); };
  }
  c.take_wait = [pool] {
    const double s = pool->stats().halo_wait_s;
    pool->reset_stats();
    return s;
  };
  c.plan = pool->describe();
  return c;
}

// Scale and shift random from seeds 2 and 3 (as --bnorm's host driver);
// backward() writes their gradients, so they count as the backward-data
// pass's.
template <typename T, typename Space>
LayerCase<T, Space> make_bnorm_case(const ConvProblem& p,
                                    const ProcessGrid& grid,
                                    const Exec<Space>& exec) {
  using P = Compute<T>;
  const Index channels = p.src_shape[1];
  BatchNormOptions options;
  options.epsilon = kBnormEpsilon;
  auto bn = std::make_shared<BatchNorm<T, Space>>(
      grid, Distribution(p.src_shape, grid.shape()), options, exec);
  LayerCase<T, Space> c;
  DistTensor<T, Space>& x = c.input("x", grid, bn->src_layout());
  DistTensor<T, Space>& dy = c.input("dy", grid, bn->diff_dst_layout());
  DistTensor<T, Space>& y = c.output("y", grid, bn->dst_layout());
  DistTensor<T, Space>& dx = c.output("dx", grid, bn->diff_src_layout());
  P* scale = c.param("scale", Shape{channels}, 2);
  P* shift = c.param("shift", Shape{channels}, 3);
  P* dscale = c.grad("dscale", Shape{channels});
  P* dshift = c.grad("dshift", Shape{channels});
  c.grads_pass = BenchDir::kBackwardData;
  c.forward = [bn, &x, scale, shift, &y] { bn->forward(x, scale, shift, y); };
  c.backward_data = [bn, &x, &dy, scale, &dx, dscale, dshift] {
    bn->backward(x, dy, scale, dx, dscale, dshift);
  };
  c.plan = bn->describe();
  return c;
}

template <typename T, typename Space>
LayerCase<T, Space> make_layer_case(const BenchOptions& o, const ConvProblem& p,
                                    const ProcessGrid& grid,
                                    const Exec<Space>& exec) {
  switch (o.driver) {
    case ProblemKind::kConvolution:
      return make_conv_case<T, Space>(o, p, grid, exec);
    case ProblemKind::kDeconvolution:
      return make_deconv_case<T, Space>(o, p, grid, exec);
    case ProblemKind::kPooling:
      return make_pool_case<T, Space>(o, p, grid, exec);
    case ProblemKind::kBatchNorm:
      return make_bnorm_case<T, Space>(p, grid, exec);
    case ProblemKind::kGroupNorm:  // host only (perf/gnorm_bench.cc)
      require(false, ErrorKind::kUnsupported,
              "--gnorm has no case in device memory");
      break;
    case ProblemKind::kInterpolate:  // host only (perf/interp_bench.cc)
      require(false, ErrorKind::kUnsupported,
              "--interp has no case in device memory");
      break;
    case ProblemKind::kElementwise:
      break;
  }
  return make_eltwise_case<T, Space>(o.eltwise_alg, grid, p.src_shape, exec);
}

}  // namespace distconv

#endif  // DISTCONV_PERF_LAYER_CASES_H_
