// distconv_bench --eltwise: the layers with no communication (ReLU, leaky
// ReLU, add, channel concat, nearest upsampling), distributed or as bare
// oneDNN primitives on the whole tensor (eltwise, binary, concat,
// resampling; all channels-last, as the layers store their tensors).
#include <dnnl.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layers/activation.h"
#include "layers/add.h"
#include "layers/concat.h"
#include "distconv/dist_tensor.h"
#include "layers/upsample.h"
#include "kernels/reference/activation.h"
#include "kernels/reference/concat.h"
#include "kernels/reference/upsample.h"
#include "tests/conv_check.h"
#include "perf/layer_bench.h"
#include "perf/tensor_dump.h"
#include "perf/onednn_memory.h"

namespace distconv {
namespace {

constexpr double kLeakySlope = 0.1;

ActivationDesc activation_desc(EltwiseAlg alg) {
  return alg == EltwiseAlg::kLeakyRelu ? ActivationDesc::leaky_relu(kLeakySlope)
                                       : ActivationDesc::relu();
}

UpsampleDesc upsample_desc(const Shape& src) {
  return UpsampleDesc{Shape::filled(src.ndims() - 2, 2)};
}

// The output's shape: the input's, with 2 ic channels for concat and
// twice each spatial extent for upsampling.
Shape dst_shape(EltwiseAlg alg, const Shape& src) {
  if (alg == EltwiseAlg::kUpsample) return upsample_desc(src).dst_shape(src);
  Shape dst = src;
  if (alg == EltwiseAlg::kConcat) dst[1] *= 2;
  return dst;
}

// One operation per output value per pass (what "GFLOP/s" counts here).
double operations(EltwiseAlg alg, const Shape& src, BenchDir dir) {
  const double n = static_cast<double>(dst_shape(alg, src).volume());
  return (runs_pass(dir, BenchDir::kForward) ? n : 0) +
         (runs_pass(dir, BenchDir::kBackwardData) ? n : 0);
}

// A distributed tensor and its name in --dump-dir.
template <typename T>
struct Named {
  std::string name;
  std::unique_ptr<DistTensor<T>> tensor;
};

// The layer's tensors and passes for one --alg. Inputs: x (and x2 for add
// and concat), dy; outputs: y, dx (and dx2).
template <typename T>
struct Case {
  std::vector<Named<T>> inputs, outputs;
  std::function<void()> forward, backward;
  std::string plan;

  DistTensor<T>& add_tensor(std::vector<Named<T>>* list,
                            const std::string& name, const ProcessGrid& grid,
                            const HaloLayout& layout) {
    list->push_back({name, std::make_unique<DistTensor<T>>(grid, layout)});
    return *list->back().tensor;
  }
};

template <typename T>
Case<T> make_case(EltwiseAlg alg, const ProcessGrid& grid, const Shape& shape) {
  Case<T> c;
  const Distribution dist(shape, grid.shape());
  auto in = [&](const std::string& n, const HaloLayout& l) -> DistTensor<T>& {
    return c.add_tensor(&c.inputs, n, grid, l);
  };
  auto out = [&](const std::string& n, const HaloLayout& l) -> DistTensor<T>& {
    return c.add_tensor(&c.outputs, n, grid, l);
  };
  switch (alg) {
    case EltwiseAlg::kRelu:
    case EltwiseAlg::kLeakyRelu: {
      auto act = std::make_shared<Activation<T>>(grid, activation_desc(alg),
                                                 dist);
      DistTensor<T>& x = in("x", act->layout());
      DistTensor<T>& dy = in("dy", act->layout());
      DistTensor<T>& y = out("y", act->layout());
      DistTensor<T>& dx = out("dx", act->layout());
      c.forward = [act, &x, &y] { act->forward(x, y); };
      c.backward = [act, &x, &dy, &dx] { act->backward(x, dy, dx); };
      c.plan = "activation: each rank's shard alone, channels-last\n";
      break;
    }
    case EltwiseAlg::kAdd: {
      const HaloLayout l = HaloLayout(dist).with_storage(
          StorageOrder::kChannelsLast);
      DistTensor<T>& a = in("x", l);
      DistTensor<T>& b = in("x2", l);
      DistTensor<T>& dy = in("dy", l);
      DistTensor<T>& y = out("y", l);
      DistTensor<T>& da = out("dx", l);
      DistTensor<T>& db = out("dx2", l);
      c.forward = [&a, &b, &y] { add(a, b, y); };
      c.backward = [&dy, &da, &db] { add_backward(dy, da, db); };
      c.plan = "add: each rank's shard alone; backward copies dy twice\n";
      break;
    }
    case EltwiseAlg::kConcat: {
      auto cat = std::make_shared<Concat<T>>(
          grid, std::vector<Distribution>{dist, dist});
      DistTensor<T>& a = in("x", cat->src_layout(0));
      DistTensor<T>& b = in("x2", cat->src_layout(1));
      DistTensor<T>& dy = in("dy", cat->dst_layout());
      DistTensor<T>& y = out("y", cat->dst_layout());
      DistTensor<T>& da = out("dx", cat->src_layout(0));
      DistTensor<T>& db = out("dx2", cat->src_layout(1));
      c.forward = [cat, &a, &b, &y] { cat->forward({&a, &b}, y); };
      c.backward = [cat, &dy, &da, &db] { cat->backward(dy, {&da, &db}); };
      c.plan = "concat: each rank's shard alone, channels-last\n";
      break;
    }
    case EltwiseAlg::kUpsample: {
      auto up = std::make_shared<Upsample<T>>(grid, upsample_desc(shape),
                                              dist);
      DistTensor<T>& x = in("x", up->src_layout());
      DistTensor<T>& dy = in("dy", up->dst_layout());
      DistTensor<T>& y = out("y", up->dst_layout());
      DistTensor<T>& dx = out("dx", up->src_layout());
      c.forward = [up, &x, &y] { up->forward(x, y); };
      c.backward = [up, &dy, &dx] { up->backward(dy, dx); };
      c.plan = "nearest upsampling: each rank's shard alone, channels-last\n";
      break;
    }
  }
  return c;
}

// The reference results (y, dx[, dx2]) from the global inputs, in the
// order of Case::outputs.
template <typename T>
std::vector<std::vector<T>> reference_results(
    EltwiseAlg alg, const Shape& shape,
    const std::vector<std::vector<T>>& in) {
  const Index n = shape.volume();
  const std::vector<T>& x = in[0];
  switch (alg) {
    case EltwiseAlg::kRelu:
    case EltwiseAlg::kLeakyRelu: {
      std::vector<T> y(n), dx(n);
      const ActivationDesc d = activation_desc(alg);
      reference::activation_fwd(d, n, x.data(), y.data());
      reference::activation_bwd(d, n, x.data(), in[1].data(), dx.data());
      return {y, dx};
    }
    case EltwiseAlg::kAdd: {
      std::vector<T> y(n);
      for (Index i = 0; i < n; ++i) y[i] = x[i] + in[1][i];
      return {y, in[2], in[2]};
    }
    case EltwiseAlg::kConcat: {
      const Shape dst = dst_shape(alg, shape);
      std::vector<T> y(dst.volume()), da(n), db(n);
      reference::concat_channels<T>({shape, shape}, {x.data(), in[1].data()},
                                    y.data());
      reference::slice_channels(dst, 0, shape[1], in[2].data(), da.data());
      reference::slice_channels(dst, shape[1], dst[1], in[2].data(),
                                db.data());
      return {y, da, db};
    }
    case EltwiseAlg::kUpsample: {
      const UpsampleDesc d = upsample_desc(shape);
      std::vector<T> y(d.dst_shape(shape).volume()), dx(n);
      reference::upsample_fwd(d, shape, x.data(), y.data());
      reference::upsample_bwd(d, shape, in[1].data(), dx.data());
      return {y, dx};
    }
  }
  return {};
}

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  const EltwiseAlg alg = o.eltwise_alg;
  const Shape shape = problem.src_shape;
  ProcessGrid grid(MPI_COMM_WORLD, grid_for(o, shape, world_ranks(), problem));
  Case<T> c = make_case<T>(alg, grid, shape);
  print_plan(o, grid.rank(), c.plan);
  std::vector<std::vector<T>> inputs;
  unsigned seed = 1;
  for (Named<T>& t : c.inputs) {
    inputs.push_back(scatter_random(o, *t.tensor, seed++));
  }
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  auto run = [&] {
    if (fwd) c.forward();
    if (bwd) c.backward();
    return 0.0;  // no communication
  };
  BenchResult r;
  time_for_mode(o, run, &r);
  r.gflops = operations(alg, shape, o.dir) / (r.median_ms * 1e-3) / 1e9;
  if (o.mode == BenchMode::kPerf) return r;
  // y is always compared (with --dir=bwd_d the forward runs once here);
  // the gradients only when the backward ran.
  if (!fwd) c.forward();
  TensorDump dump(grid.comm(), o);
  for (const Named<T>& t : c.inputs) dump.add(t.name, *t.tensor);
  for (const Named<T>& t : c.outputs) dump.add(t.name, *t.tensor);
  dump.close();
  std::vector<std::vector<T>> got;
  for (Named<T>& t : c.outputs) got.push_back(gathered(*t.tensor));
  if (grid.rank() != 0) return r;
  // The reference in Compute<T> (fp32 for bf16) on the same inputs.
  using P = Compute<T>;
  std::vector<std::vector<P>> wide;
  for (const std::vector<T>& v : inputs) wide.push_back(widened(v));
  const auto want = reference_results(alg, shape, wide);
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (i > 0 && !bwd) break;
    err = std::max(err, max_relative_error(widened(got[i]), want[i]));
  }
  r.max_rel_err = err;
  const double tol = std::is_same_v<P, float> ? 1e-6 : 1e-12;
  r.status = err <= rounded_tolerance<T>(tol) ? "PASS" : "FAIL";
  return r;
}

// oneDNN's primitives for the same passes on the whole tensor, in one
// process: eltwise forward and backward (relu with alpha = the slope);
// binary add, and for its backward two reorders (dy copied into da and
// db, what add_backward does); concat along channels, and for its
// backward two reorders from views of dy's channel ranges; resampling
// (nearest) forward and backward.
BenchResult run_onednn(const BenchOptions& o, const ConvProblem& problem) {
  using dnnl::memory;
  const EltwiseAlg alg = o.eltwise_alg;
  const Shape& s = problem.src_shape;
  const Shape d = dst_shape(alg, s);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const auto tag =
      s.ndims() == 5 ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
  const memory::desc src_md(memory::dims(s.begin(), s.end()),
                            memory::data_type::f32, tag);
  const memory::desc dst_md(memory::dims(d.begin(), d.end()),
                            memory::data_type::f32, tag);
  auto filled = [&](const memory::desc& md, unsigned seed) {
    return random_memory(md, engine, seed);
  };

  memory x = filled(src_md, 1), x2 = filled(src_md, 2), dx = filled(src_md, 3),
         dx2 = filled(src_md, 4), y = filled(dst_md, 5), dy = filled(dst_md, 6);
  std::function<void()> forward, backward;
  switch (alg) {
    case EltwiseAlg::kRelu:
    case EltwiseAlg::kLeakyRelu: {
      const float alpha = alg == EltwiseAlg::kLeakyRelu ? kLeakySlope : 0.0f;
      const dnnl::eltwise_forward::primitive_desc fpd(
          {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_relu,
           src_md, alpha},
          engine);
      const dnnl::eltwise_backward::primitive_desc bpd(
          {dnnl::algorithm::eltwise_relu, src_md, src_md, alpha}, engine, fpd);
      auto f = std::make_shared<dnnl::eltwise_forward>(fpd);
      auto b = std::make_shared<dnnl::eltwise_backward>(bpd);
      forward = [=, &stream] {
        f->execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
      };
      backward = [=, &stream] {
        b->execute(stream, {{DNNL_ARG_SRC, x},
                            {DNNL_ARG_DIFF_DST, dy},
                            {DNNL_ARG_DIFF_SRC, dx}});
      };
      break;
    }
    case EltwiseAlg::kAdd: {
      const dnnl::binary::primitive_desc pd(
          {dnnl::algorithm::binary_add, src_md, src_md, src_md}, engine);
      auto f = std::make_shared<dnnl::binary>(pd);
      auto copy = std::make_shared<dnnl::reorder>(dy, dx);
      forward = [=, &stream] {
        f->execute(stream,
                   {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, x2}, {DNNL_ARG_DST, y}});
      };
      backward = [=, &stream] {
        copy->execute(stream, {{DNNL_ARG_FROM, dy}, {DNNL_ARG_TO, dx}});
        copy->execute(stream, {{DNNL_ARG_FROM, dy}, {DNNL_ARG_TO, dx2}});
      };
      break;
    }
    case EltwiseAlg::kConcat: {
      const dnnl::concat::primitive_desc pd(dst_md, 1, {src_md, src_md},
                                            engine);
      auto f = std::make_shared<dnnl::concat>(pd);
      memory::dims half(d.begin(), d.end()), second(d.ndims(), 0);
      half[1] = s[1];
      second[1] = s[1];
      const memory::desc first_md =
          dst_md.submemory_desc(half, memory::dims(d.ndims(), 0));
      const memory::desc second_md = dst_md.submemory_desc(half, second);
      const memory dy_first(first_md, engine, dy.get_data_handle());
      const memory dy_second(second_md, engine, dy.get_data_handle());
      auto copy1 = std::make_shared<dnnl::reorder>(dy_first, dx);
      auto copy2 = std::make_shared<dnnl::reorder>(dy_second, dx2);
      forward = [=, &stream] {
        f->execute(stream, {{DNNL_ARG_MULTIPLE_SRC, x},
                            {DNNL_ARG_MULTIPLE_SRC + 1, x2},
                            {DNNL_ARG_DST, y}});
      };
      backward = [=, &stream] {
        copy1->execute(stream, {{DNNL_ARG_FROM, dy_first}, {DNNL_ARG_TO, dx}});
        copy2->execute(stream, {{DNNL_ARG_FROM, dy_second}, {DNNL_ARG_TO, dx2}});
      };
      break;
    }
    case EltwiseAlg::kUpsample: {
      const dnnl::resampling_forward::primitive_desc fpd(
          {dnnl::prop_kind::forward_training,
           dnnl::algorithm::resampling_nearest, src_md, dst_md},
          engine);
      const dnnl::resampling_backward::primitive_desc bpd(
          {dnnl::algorithm::resampling_nearest, src_md, dst_md}, engine, fpd);
      auto f = std::make_shared<dnnl::resampling_forward>(fpd);
      auto b = std::make_shared<dnnl::resampling_backward>(bpd);
      forward = [=, &stream] {
        f->execute(stream, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
      };
      backward = [=, &stream] {
        b->execute(stream, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}});
      };
      break;
    }
  }
  const bool fwd = runs_pass(o.dir, BenchDir::kForward);
  const bool bwd = runs_pass(o.dir, BenchDir::kBackwardData);
  BenchResult r;
  time_runs(
      o,
      [&] {
        if (fwd) forward();
        if (bwd) backward();
        stream.wait();
        return 0.0;
      },
      &r);
  r.gflops = operations(alg, s, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

BenchResult run_eltwise_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
