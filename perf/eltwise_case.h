// distconv_bench --eltwise's layers as LayerCases in either memory space:
// ReLU, leaky ReLU, add, channel concat, nearest upsampling. Inputs: x
// (and x2 for add and concat), dy; outputs: y, dx (and dx2). In device
// memory the work is queued on `exec`'s stream.
#ifndef DISTCONV_PERF_ELTWISE_CASE_H_
#define DISTCONV_PERF_ELTWISE_CASE_H_

#include <memory>
#include <vector>

#include "distconv/activation_desc.h"
#include "distconv/upsample_desc.h"
#include "layers/activation.h"
#include "layers/add.h"
#include "layers/concat.h"
#include "layers/upsample.h"
#include "perf/bench_options.h"
#include "perf/layer_case.h"

namespace distconv {

inline constexpr double kLeakySlope = 0.1;

inline ActivationDesc eltwise_activation(EltwiseAlg alg) {
  return alg == EltwiseAlg::kLeakyRelu ? ActivationDesc::leaky_relu(kLeakySlope)
                                       : ActivationDesc::relu();
}

inline UpsampleDesc eltwise_upsample(const Shape& src) {
  return UpsampleDesc{Shape::filled(src.ndims() - 2, 2)};
}

// The output's shape: the input's, with 2 ic channels for concat and
// twice each spatial extent for upsampling.
inline Shape eltwise_dst_shape(EltwiseAlg alg, const Shape& src) {
  if (alg == EltwiseAlg::kUpsample) return eltwise_upsample(src).dst_shape(src);
  Shape dst = src;
  if (alg == EltwiseAlg::kConcat) dst[1] *= 2;
  return dst;
}

template <typename T, typename Space>
LayerCase<T, Space> make_eltwise_case(EltwiseAlg alg, const ProcessGrid& grid,
                                      const Shape& shape,
                                      const Exec<Space>& exec = {}) {
  LayerCase<T, Space> c;
  const Distribution dist(shape, grid.shape());
  auto in = [&](const char* n, const HaloLayout& l) -> DistTensor<T, Space>& {
    return c.input(n, grid, l);
  };
  auto out = [&](const char* n, const HaloLayout& l) -> DistTensor<T, Space>& {
    return c.output(n, grid, l);
  };
  switch (alg) {
    case EltwiseAlg::kRelu:
    case EltwiseAlg::kLeakyRelu: {
      auto act = std::make_shared<Activation<T, Space>>(
          grid, eltwise_activation(alg), dist, exec);
      DistTensor<T, Space>& x = in("x", act->layout());
      DistTensor<T, Space>& dy = in("dy", act->layout());
      DistTensor<T, Space>& y = out("y", act->layout());
      DistTensor<T, Space>& dx = out("dx", act->layout());
      c.forward = [act, &x, &y] { act->forward(x, y); };
      c.backward_data = [act, &x, &dy, &dx] { act->backward(x, dy, dx); };
      c.plan = "activation: each rank's shard alone, channels-last\n";
      break;
    }
    case EltwiseAlg::kAdd: {
      const HaloLayout l =
          HaloLayout(dist).with_storage(StorageOrder::kChannelsLast);
      DistTensor<T, Space>& a = in("x", l);
      DistTensor<T, Space>& b = in("x2", l);
      DistTensor<T, Space>& dy = in("dy", l);
      DistTensor<T, Space>& y = out("y", l);
      DistTensor<T, Space>& da = out("dx", l);
      DistTensor<T, Space>& db = out("dx2", l);
      c.forward = [&a, &b, &y, exec] { add(a, b, y, exec); };
      c.backward_data = [&dy, &da, &db, exec] {
        add_backward(dy, da, db, exec);
      };
      c.plan = "add: each rank's shard alone; backward copies dy twice\n";
      break;
    }
    case EltwiseAlg::kConcat: {
      auto cat = std::make_shared<Concat<T, Space>>(
          grid, std::vector<Distribution>{dist, dist}, exec);
      DistTensor<T, Space>& a = in("x", cat->src_layout(0));
      DistTensor<T, Space>& b = in("x2", cat->src_layout(1));
      DistTensor<T, Space>& dy = in("dy", cat->dst_layout());
      DistTensor<T, Space>& y = out("y", cat->dst_layout());
      DistTensor<T, Space>& da = out("dx", cat->src_layout(0));
      DistTensor<T, Space>& db = out("dx2", cat->src_layout(1));
      c.forward = [cat, &a, &b, &y] { cat->forward({&a, &b}, y); };
      c.backward_data = [cat, &dy, &da, &db] {
        cat->backward(dy, {&da, &db});
      };
      c.plan = "concat: each rank's shard alone, channels-last\n";
      break;
    }
    case EltwiseAlg::kUpsample: {
      auto up = std::make_shared<Upsample<T, Space>>(
          grid, eltwise_upsample(shape), dist, exec);
      DistTensor<T, Space>& x = in("x", up->src_layout());
      DistTensor<T, Space>& dy = in("dy", up->dst_layout());
      DistTensor<T, Space>& y = out("y", up->dst_layout());
      DistTensor<T, Space>& dx = out("dx", up->src_layout());
      c.forward = [up, &x, &y] { up->forward(x, y); };
      c.backward_data = [up, &dy, &dx] { up->backward(dy, dx); };
      c.plan = "nearest upsampling: each rank's shard alone, channels-last\n";
      break;
    }
  }
  return c;
}

}  // namespace distconv

#endif  // DISTCONV_PERF_ELTWISE_CASE_H_
