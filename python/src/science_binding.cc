// The layers of scientific networks for the PyTorch modules
// (python/distconv/nn.py: GroupNorm, InstanceNorm2d/3d,
// AdaptiveAvgPool2d/3d, AdaptiveMaxPool2d/3d, Upsample's linear modes,
// Dropout, Dropout2d/3d; distconv.interpolate).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "distconv/adaptive_pool_desc.h"
#include "distconv/error.h"
#include "distconv/interpolate_desc.h"
#include "layers/adaptive_pool.h"
#include "layers/dropout.h"
#include "layers/group_norm.h"
#include "layers/interpolate.h"
#include "python/src/bindings.h"
#include "python/src/casters.h"
#include "python/src/element_types.h"
#include "python/src/tensor_ref.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

using GridPtr = std::shared_ptr<ProcessGrid>;

// Group and instance normalisation. Instance normalisation's running
// statistics stay in the PyTorch module's buffers: handed in before each
// forward, read back after a training one.
template <typename T>
class GroupNormModule {
 public:
  using P = Compute<T>;

  GroupNormModule(GridPtr grid, const Distribution& src, Index groups,
                  double epsilon, bool track_running, double momentum)
      : grid_(std::move(grid)),
        layer_(*grid_, src, options(groups, epsilon, track_running, momentum)) {
  }

  std::string describe() const { return layer_.describe(); }

  void forward(const TensorRef& x, std::uintptr_t scale, std::uintptr_t shift,
               const TensorRef& y, std::uintptr_t mean, std::uintptr_t variance,
               bool training) {
    const bool running = layer_.plan().options.running == RunningStats::kTrack;
    layer_.set_mode(training || !running ? BatchNormMode::kTraining
                                         : BatchNormMode::kInference);
    if (running) {
      layer_.set_running_stats(as_ptr<const double>(mean),
                               as_ptr<const double>(variance));
    }
    Output<T> dst(*grid_, layer_.dst_layout(), y);
    layer_.forward(bind_input(*grid_, layer_.src_layout(), x, x_slot_),
                   as_ptr<const P>(scale), as_ptr<const P>(shift),
                   dst.tensor());
    dst.finish();
    if (running && training) {
      const auto& m = layer_.running_mean();
      const auto& v = layer_.running_variance();
      std::copy(m.begin(), m.end(), as_ptr<double>(mean));
      std::copy(v.begin(), v.end(), as_ptr<double>(variance));
    }
    ++forwards_;
  }
  // `forward_id`: the number of forwards when the one to differentiate
  // ran (the layer keeps the last one's statistics).
  void backward(long long forward_id, const TensorRef& x, const TensorRef& dy,
                std::uintptr_t scale, const TensorRef& dx,
                std::uintptr_t dscale, std::uintptr_t dshift) {
    require(forward_id == forwards_, ErrorKind::kState,
            "this normalisation keeps the statistics of its last forward: "
            "run backward before calling the same module again (or use one "
            "module per call)");
    Output<T> diff_src(*grid_, layer_.diff_src_layout(), dx);
    layer_.backward(bind_input(*grid_, layer_.src_layout(), x, x_slot_),
                    bind_input(*grid_, layer_.diff_dst_layout(), dy, dy_slot_),
                    as_ptr<const P>(scale), diff_src.tensor(),
                    as_ptr<P>(dscale), as_ptr<P>(dshift));
    diff_src.finish();
  }
  long long forwards() const { return forwards_; }

 private:
  static GroupNormOptions options(Index groups, double epsilon,
                                  bool track_running, double momentum) {
    GroupNormOptions o;
    o.groups = groups;
    o.epsilon = epsilon;
    o.running = track_running ? RunningStats::kTrack : RunningStats::kNone;
    o.momentum = momentum;
    return o;
  }

  GridPtr grid_;
  GroupNorm<T> layer_;
  Slot<T> x_slot_, dy_slot_;
  long long forwards_ = 0;
};

template <typename T>
class AdaptivePoolModule {
 public:
  AdaptivePoolModule(GridPtr grid, AdaptivePoolKind kind, const Shape& size,
                     const Distribution& src)
      : grid_(std::move(grid)), layer_(*grid_, {kind, size}, src) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  std::string describe() const { return layer_.describe(); }
  long long forward(const TensorRef& x, const TensorRef& y) {
    run_one_to_one(*grid_, layer_.src_layout(), x, slot_, layer_.dst_layout(),
                   y, out_slot_,
                   [&](auto& src, auto& dst) { layer_.forward(src, dst); });
    return ++forwards_;
  }
  void backward(long long forward_id, const TensorRef& dy,
                const TensorRef& dx) {
    require(layer_.plan().desc.kind == AdaptivePoolKind::kAverage ||
                forward_id == forwards_,
            ErrorKind::kState,
            "adaptive max pooling keeps the maxima of its last forward: run "
            "backward before calling the same module again (or use one "
            "module per call)");
    run_one_to_one(*grid_, layer_.diff_dst_layout(), dy, slot_,
                   layer_.diff_src_layout(), dx, out_slot_,
                   [&](auto& dd, auto& ds) { layer_.backward(dd, ds); });
  }

 private:
  GridPtr grid_;
  AdaptivePooling<T> layer_;
  Slot<T> slot_, out_slot_;
  long long forwards_ = 0;
};

// Every type reads the input and writes its gradient in place (the
// caller's tensors and a frame each for the edges); the layer computes the
// 16-bit types on fp32 copies.
template <typename T>
class InterpolateModule {
 public:
  InterpolateModule(GridPtr grid, const Shape& size,
                    const std::vector<double>& scales, bool align_corners,
                    const Distribution& src)
      : grid_(std::move(grid)),
        layer_(*grid_, desc(size, scales, align_corners), src, options()) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  std::string describe() const { return layer_.describe(); }
  void forward(const TensorRef& x, const TensorRef& y) {
    if (!layer_.plan().in_place()) {
      run_one_to_one(*grid_, layer_.src_layout(), x, slot_, layer_.dst_layout(),
                     y, out_slot_,
                     [&](auto& src, auto& dst) { layer_.forward(src, dst); });
      return;
    }
    Output<T> dst(*grid_, layer_.dst_layout(), y, out_slot_);
    layer_.forward(bind_input(*grid_, layer_.shard_layout(), x, slot_),
                   frame(x_frame_), dst.tensor());
    dst.finish();
  }
  void backward(const TensorRef& dy, const TensorRef& dx) {
    if (!layer_.plan().in_place()) {
      run_one_to_one(*grid_, layer_.diff_dst_layout(), dy, slot_,
                     layer_.diff_src_layout(), dx, out_slot_,
                     [&](auto& dd, auto& ds) { layer_.backward(dd, ds); });
      return;
    }
    Output<T> diff_src(*grid_, layer_.shard_layout(), dx, out_slot_);
    layer_.backward(bind_input(*grid_, layer_.diff_dst_layout(), dy, slot_),
                    diff_src.tensor(), frame(dx_frame_));
    diff_src.finish();
  }

 private:
  static InterpolateDesc desc(const Shape& size,
                              const std::vector<double>& scales,
                              bool align_corners) {
    InterpolateDesc d = InterpolateDesc::of_size(size);
    d.scales = scales;
    d.align_corners = align_corners ? AlignCorners::kYes : AlignCorners::kNo;
    return d;
  }
  static InterpolateOptions options() {
    InterpolateOptions o;
    o.input = ConvInput::kInPlace;
    return o;
  }
  // A frame of src_layout(), made on first use and kept.
  DistTensor<T>& frame(std::unique_ptr<DistTensor<T>>& f) {
    if (!f) f = std::make_unique<DistTensor<T>>(*grid_, layer_.src_layout());
    return *f;
  }

  GridPtr grid_;
  Interpolate<T> layer_;
  Slot<T> slot_, out_slot_;
  std::unique_ptr<DistTensor<T>> x_frame_, dx_frame_;
};

template <typename T>
class DropoutModule {
 public:
  DropoutModule(GridPtr grid, double p, bool channels, const Distribution& src)
      : grid_(std::move(grid)),
        layer_(*grid_,
               {p, channels ? DropoutKind::kChannels : DropoutKind::kElements},
               src) {}
  void apply(const TensorRef& x, const TensorRef& y, std::uint64_t seed) {
    Output<T> dst(*grid_, layer_.layout(), y);
    layer_.forward(bind_input(*grid_, layer_.layout(), x, slot_), dst.tensor(),
                   seed);
    dst.finish();
  }

 private:
  GridPtr grid_;
  Dropout<T> layer_;
  Slot<T> slot_;
};

template <typename T>
void bind_typed(py::module_& m, const std::string& suffix) {
  py::class_<GroupNormModule<T>>(m, ("GroupNorm" + suffix).c_str())
      .def(
          py::init<GridPtr, const Distribution&, Index, double, bool, double>())
      .def("describe", &GroupNormModule<T>::describe)
      .def("forward", &GroupNormModule<T>::forward)
      .def("forwards", &GroupNormModule<T>::forwards)
      .def("backward", &GroupNormModule<T>::backward);
  py::class_<AdaptivePoolModule<T>>(m, ("AdaptivePooling" + suffix).c_str())
      .def(py::init<GridPtr, AdaptivePoolKind, const Shape&,
                    const Distribution&>())
      .def("dst_shape", &AdaptivePoolModule<T>::dst_shape)
      .def("describe", &AdaptivePoolModule<T>::describe)
      .def("forward", &AdaptivePoolModule<T>::forward)
      .def("backward", &AdaptivePoolModule<T>::backward);
  py::class_<InterpolateModule<T>>(m, ("Interpolate" + suffix).c_str())
      .def(py::init<GridPtr, const Shape&, const std::vector<double>&, bool,
                    const Distribution&>())
      .def("dst_shape", &InterpolateModule<T>::dst_shape)
      .def("describe", &InterpolateModule<T>::describe)
      .def("forward", &InterpolateModule<T>::forward)
      .def("backward", &InterpolateModule<T>::backward);
  py::class_<DropoutModule<T>>(m, ("Dropout" + suffix).c_str())
      .def(py::init<GridPtr, double, bool, const Distribution&>())
      .def("apply", &DropoutModule<T>::apply);
}

}  // namespace

void bind_science(py::module_& m) {
  py::enum_<AdaptivePoolKind>(m, "AdaptivePoolKind")
      .value("average", AdaptivePoolKind::kAverage)
      .value("max", AdaptivePoolKind::kMax);
  for_each_layer_type([&](auto tag, const std::string& suffix) {
    bind_typed<typename decltype(tag)::type>(m, suffix);
  });
}

}  // namespace distconv::python
