// distconv_bench --eltwise: the layers with no communication (ReLU, leaky
// ReLU, add, channel concat, nearest upsampling), distributed or as bare
// oneDNN primitives on the whole tensor (eltwise, binary, concat,
// resampling; all channels-last, as the layers store their tensors).
#include <dnnl.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/reference/activation.h"
#include "kernels/reference/concat.h"
#include "kernels/reference/upsample.h"
#include "tests/conv_check.h"
#include "perf/case_bench.h"
#include "perf/eltwise_case.h"
#include "perf/layer_bench.h"
#include "perf/onednn_memory.h"

namespace distconv {
namespace {

// The reference results (y, dx[, dx2]) from the global inputs, in the
// order of the case's outputs.
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
      const ActivationDesc d = eltwise_activation(alg);
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
      const Shape dst = eltwise_dst_shape(alg, shape);
      std::vector<T> y(dst.volume()), da(n), db(n);
      reference::concat_channels<T>({shape, shape}, {x.data(), in[1].data()},
                                    y.data());
      reference::slice_channels(dst, 0, shape[1], in[2].data(), da.data());
      reference::slice_channels(dst, shape[1], dst[1], in[2].data(),
                                db.data());
      return {y, da, db};
    }
    case EltwiseAlg::kUpsample: {
      const UpsampleDesc d = eltwise_upsample(shape);
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
  LayerCase<T, HostSpace> c =
      make_eltwise_case<T, HostSpace>(alg, grid, shape);
  // The reference in Compute<T> (fp32 for bf16) on the same inputs; no
  // communication, so comm_wait_ms is 0.
  using P = Compute<T>;
  auto reference = [&](BenchDir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>&) {
    return reference_results(alg, shape, in);
  };
  return run_host_case(o, grid, c, eltwise_operations(alg, shape, o.dir),
                       std::is_same_v<P, float> ? 1e-6 : 1e-12, reference);
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
  const Shape d = eltwise_dst_shape(alg, s);
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
          engine, dnnl::prop_kind::forward_training,
          dnnl::algorithm::eltwise_relu, src_md, src_md, alpha);
      const dnnl::eltwise_backward::primitive_desc bpd(
          engine, dnnl::algorithm::eltwise_relu, src_md, src_md, src_md,
          alpha, 0.0f, fpd);
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
          engine, dnnl::algorithm::binary_add, src_md, src_md, src_md);
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
      const dnnl::concat::primitive_desc pd(engine, dst_md, 1,
                                            {src_md, src_md});
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
          engine, dnnl::prop_kind::forward_training,
          dnnl::algorithm::resampling_nearest, src_md, dst_md);
      const dnnl::resampling_backward::primitive_desc bpd(
          engine, dnnl::algorithm::resampling_nearest, src_md, dst_md, fpd);
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
  r.gflops = eltwise_operations(alg, s, o.dir) / (r.median_ms * 1e-3) / 1e9;
  return r;
}

}  // namespace

double eltwise_operations(EltwiseAlg alg, const Shape& src, BenchDir dir) {
  const double n = static_cast<double>(eltwise_dst_shape(alg, src).volume());
  return (runs_pass(dir, BenchDir::kForward) ? n : 0) +
         (runs_pass(dir, BenchDir::kBackwardData) ? n : 0);
}

BenchResult run_eltwise_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.impl == BenchImpl::kOnednn) return run_onednn(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
