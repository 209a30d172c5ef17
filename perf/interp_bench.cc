// distconv_bench --interp: the distributed linear interpolation (bilinear,
// trilinear) to twice the input's size, align_corners no: forward and
// backward against the reference loops, or timed; with buffers with halos
// or (--input=in_place) reading the input and writing its gradient in the
// caller's shards. The host layer only: no baseline. Every --dt: the
// layer reads and writes bf16 and f16 tensors as they are.
#include <memory>
#include <type_traits>
#include <vector>

#include "distconv/dist_tensor.h"
#include "kernels/reference/interpolate.h"
#include "layers/interpolate.h"
#include "perf/case_bench.h"
#include "perf/layer_bench.h"
#include "tests/conv_check.h"

namespace distconv {
namespace {

template <typename T>
BenchResult run_distconv(const BenchOptions& o, const ConvProblem& problem) {
  using P = Compute<T>;
  const Shape src_shape = problem.src_shape;
  const InterpolateDesc desc = interp_desc(src_shape);
  ProcessGrid grid(MPI_COMM_WORLD,
                   grid_for(o, src_shape, world_ranks(), problem));
  InterpolateOptions options;
  options.halo.transport = o.transport;
  options.input = o.input;
  auto up = std::make_shared<Interpolate<T>>(
      grid, desc, Distribution(src_shape, grid.shape()), options);
  const bool in_place = options.input == ConvInput::kInPlace;
  // In place, the input and its gradient are shards without halos and the
  // halos travel in frames (the input's kept from forward to backward).
  const HaloLayout& x_layout = in_place ? up->shard_layout() : up->src_layout();
  LayerCase<T, HostSpace> c;
  DistTensor<T>& x = c.input("x", grid, x_layout);
  DistTensor<T>& dy = c.input("dy", grid, up->diff_dst_layout());
  DistTensor<T>& y = c.output("y", grid, up->dst_layout());
  DistTensor<T>& dx = c.output("dx", grid, x_layout);
  if (in_place) {
    auto x_frame = std::make_shared<DistTensor<T>>(grid, up->src_layout());
    auto dx_frame = std::make_shared<DistTensor<T>>(grid, up->src_layout());
    c.forward = [up, &x, x_frame, &y] { up->forward(x, *x_frame, y); };
    c.backward_data = [up, &dy, &dx, dx_frame] {
      up->backward(dy, dx, *dx_frame);
    };
  } else {
    c.forward = [up, &x, &y] { up->forward(x, y); };
    c.backward_data = [up, &dy, &dx] { up->backward(dy, dx); };
  }
  c.plan = up->describe();
  auto reference = [&](BenchDir, const std::vector<std::vector<P>>& in,
                       const std::vector<std::vector<P>>&) {
    std::vector<P> yr(desc.dst_shape(src_shape).volume());
    std::vector<P> dxr(src_shape.volume());
    reference::interpolate_fwd<P>(desc, src_shape, in[0].data(), yr.data());
    reference::interpolate_bwd<P>(desc, src_shape, in[1].data(), dxr.data());
    return std::vector<std::vector<P>>{yr, dxr};
  };
  return run_host_case(o, grid, c, interp_operations(desc, src_shape, o.dir),
                       std::is_same_v<P, float> ? 1e-5 : 1e-12, reference);
}

}  // namespace

InterpolateDesc interp_desc(const Shape& src_shape) {
  Shape size = Shape::filled(src_shape.ndims() - 2, 0);
  for (int d = 0; d < size.ndims(); ++d) size[d] = 2 * src_shape[d + 2];
  return InterpolateDesc::of_size(size);
}

double interp_operations(const InterpolateDesc& d, const Shape& src,
                         BenchDir dir) {
  const double corners = static_cast<double>(Index{1} << d.spatial_dims());
  const double ops = 2.0 * corners * d.dst_shape(src).volume();
  return ops * (dir == BenchDir::kAll ? 2 : 1);
}

BenchResult run_interp_bench(const BenchOptions& o, const ConvProblem& p) {
  if (o.dt == BenchDataType::kF16) return run_distconv<fp16>(o, p);
  return for_dt(o, [&](auto t) { return run_distconv<decltype(t)>(o, p); });
}

}  // namespace distconv
