#include "layers/softmax.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/layer_checks.h"
#include "layers/internal/channel_cells.h"
#include "layers/internal/given_plan.h"
#include "kernels/onednn/softmax.h"

namespace distconv {
namespace {

// One cell: y = softmax(x) or log-softmax(x) over `channels` values at
// strides sx, sy; `e` is scratch for the channels' exp(x_c - max). Reads
// all of x before writing y_c, or x_c just before, so y may be x.
template <typename T>
void cell_forward(SoftmaxKind kind, Index channels, const T* x, Index sx, T* y,
                  Index sy, double* e) {
  double m = -INFINITY;
  for (Index c = 0; c < channels; ++c) m = std::max(m, double(x[c * sx]));
  double sum = 0;
  for (Index c = 0; c < channels; ++c) {
    e[c] = std::exp(double(x[c * sx]) - m);
    sum += e[c];
  }
  if (kind == SoftmaxKind::kSoftmax) {
    const double inv = 1.0 / sum;
    for (Index c = 0; c < channels; ++c) y[c * sy] = static_cast<T>(e[c] * inv);
  } else {
    const double log_sum = std::log(sum);
    for (Index c = 0; c < channels; ++c) {
      y[c * sy] = static_cast<T>((double(x[c * sx]) - m) - log_sum);
    }
  }
}

template <typename T>
void cell_backward(SoftmaxKind kind, Index channels, const T* y, Index sy,
                   const T* dy, Index sdy, T* dx, Index sdx) {
  double sum = 0;
  if (kind == SoftmaxKind::kSoftmax) {
    for (Index c = 0; c < channels; ++c) {
      sum += double(dy[c * sdy]) * double(y[c * sy]);
    }
    for (Index c = 0; c < channels; ++c) {
      const double yc = y[c * sy], dyc = dy[c * sdy];
      dx[c * sdx] = static_cast<T>(yc * (dyc - sum));
    }
  } else {
    for (Index c = 0; c < channels; ++c) sum += double(dy[c * sdy]);
    for (Index c = 0; c < channels; ++c) {
      const double yc = y[c * sy], dyc = dy[c * sdy];
      dx[c * sdx] = static_cast<T>(dyc - std::exp(yc) * sum);
    }
  }
}

}  // namespace

template <typename T>
struct Softmax<T>::Impl {
  SoftmaxKind kind;
  ShardPlan plan;
  const Distribution& dist;
  const HaloLayout& layout;
  Box shard;
  std::vector<double> scratch;  // one cell's channels
  // fp32 on a non-empty shard: oneDNN, used when the views are dense
  // channels-last (the plan's layouts); loops otherwise.
  std::unique_ptr<onednn::Softmax> dnnl;
  std::string dnnl_refused;

  Impl(ShardPlan p, const SoftmaxOptions& o)
      : kind(o.kind),
        plan(std::move(p)),
        dist(plan.layout("src").distribution()),
        layout(plan.layout("src")),
        shard(plan.shard("src")),
        scratch(dist.global_shape()[1]) {
    if (std::is_same_v<T, float> && !shard.empty()) {
      try {
        dnnl = std::make_unique<onednn::Softmax>(kind, shard.extent);
      } catch (const Error& e) {  // this rank only: no collective follows
        dnnl_refused = e.what();
      }
    }
  }

  // Whether oneDNN runs on these views.
  template <typename... Views>
  bool use_dnnl(const Views&... views) const {
    return dnnl != nullptr && (is_dense(views.extent(), views.strides(),
                                        StorageOrder::kChannelsLast) &&
                               ...);
  }

  void check(const DistTensor<T>& t, const char* what) const {
    require(t.layout().distribution() == dist, ErrorKind::kShapeMismatch, what,
            " tensor's distribution (global ", t.global_shape(), " over grid ",
            t.layout().distribution().grid_shape(),
            ") is not the softmax's (global ", dist.global_shape(),
            " over grid ", dist.grid_shape(), ", in any layout)");
  }
};

template <typename T>
Softmax<T>::Softmax(const ProcessGrid& grid, const Distribution& src,
                    const SoftmaxOptions& options) {
  const Shape& shape = src.global_shape();
  require(shape.ndims() == 4 || shape.ndims() == 5, ErrorKind::kInvalidArgument,
          "softmax input shape ", shape,
          " is not (N, C, H, W) or (N, C, D, H, W)");
  internal::check_grid(src, grid.shape(), "input");
  impl_ = internal::Pimpl<Impl>::make(
      "softmax", plan_softmax(src, grid.rank(), options), options);
}

template <typename T>
Softmax<T>::Softmax(const ProcessGrid& grid, ShardPlan plan,
                    const SoftmaxOptions& options) {
  internal::check_given_shard_plan(
      grid, plan, internal::element_name<T>(), [&] {
    return plan_softmax(plan.layout("src").distribution(), plan.rank, options);
  });
  impl_ = internal::Pimpl<Impl>::make("softmax", std::move(plan), options);
}

template <typename T>
const ShardPlan& Softmax<T>::plan() const {
  return impl().plan;
}
template <typename T>
SoftmaxKind Softmax<T>::kind() const {
  return impl().kind;
}
template <typename T>
const Distribution& Softmax<T>::distribution() const {
  return impl().dist;
}
template <typename T>
const HaloLayout& Softmax<T>::src_layout() const {
  return impl().layout;
}
template <typename T>
const HaloLayout& Softmax<T>::dst_layout() const {
  return impl().layout;
}
template <typename T>
const HaloLayout& Softmax<T>::diff_dst_layout() const {
  return impl().layout;
}
template <typename T>
const HaloLayout& Softmax<T>::diff_src_layout() const {
  return impl().layout;
}

template <typename T>
void Softmax<T>::forward(const DistTensor<T>& src, DistTensor<T>& dst) {
  Impl& s = impl();
  s.check(src, "src");
  s.check(dst, "dst");
  const StridedView<const T> x = src.interior();
  const StridedView<T> y = dst.interior();
  if constexpr (std::is_same_v<T, float>) {
    if (s.use_dnnl(x, y)) return s.dnnl->forward(x.data(), y.data());
  }
  const Index channels = x.extent()[1];
  double* e = s.scratch.data();
  internal::for_each_cell<2>(x.extent(), {x.strides(), y.strides()},
                             [&](Index, const std::array<Index, 2>& at) {
                               cell_forward(s.kind, channels, x.data() + at[0],
                                            x.strides()[1], y.data() + at[1],
                                            y.strides()[1], e);
                             });
}

template <typename T>
void Softmax<T>::backward(const DistTensor<T>& dst,
                          const DistTensor<T>& diff_dst,
                          DistTensor<T>& diff_src) {
  Impl& s = impl();
  s.check(dst, "dst");
  s.check(diff_dst, "diff_dst");
  s.check(diff_src, "diff_src");
  const StridedView<const T> y = dst.interior(), dy = diff_dst.interior();
  const StridedView<T> dx = diff_src.interior();
  if constexpr (std::is_same_v<T, float>) {
    if (s.use_dnnl(y, dy, dx)) {
      return s.dnnl->backward(y.data(), dy.data(), dx.data());
    }
  }
  const Index channels = y.extent()[1];
  internal::for_each_cell<3>(
      y.extent(), {y.strides(), dy.strides(), dx.strides()},
      [&](Index, const std::array<Index, 3>& at) {
        cell_backward(s.kind, channels, y.data() + at[0], y.strides()[1],
                      dy.data() + at[1], dy.strides()[1], dx.data() + at[2],
                      dx.strides()[1]);
      });
}

template <typename T>
std::string Softmax<T>::describe() const {
  const Impl& s = impl();
  std::ostringstream out;
  out << to_string(s.kind) << " " << s.shard << ": ";
  if (s.dnnl) {
    out << s.dnnl->implementation()
        << " on channels-last dense shards, loops in double otherwise";
  } else if (!s.dnnl_refused.empty()) {
    out << "loops in double (" << s.dnnl_refused << ")";
  } else {
    out << "loops in double";
  }
  out << "\n";
  return out.str();
}

template class Softmax<float>;
template class Softmax<double>;
template class Softmax<bf16>;

}  // namespace distconv
