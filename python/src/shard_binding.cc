// The layers that compute from each rank's own shard, for the PyTorch
// modules and functions (python/distconv/nn.py: ReLU, LeakyReLU, Upsample,
// CrossEntropyLoss, MSELoss; distconv.cat and distconv.add).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distconv/activation_desc.h"
#include "distconv/error.h"
#include "distconv/loss_desc.h"
#include "distconv/upsample_desc.h"
#include "layers/activation.h"
#include "layers/add.h"
#include "layers/concat.h"
#include "layers/loss.h"
#include "layers/upsample.h"
#include "python/src/bindings.h"
#include "python/src/casters.h"
#include "python/src/element_types.h"
#include "python/src/tensor_ref.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

using GridPtr = std::shared_ptr<ProcessGrid>;

template <typename T>
class ActivationModule {
 public:
  ActivationModule(GridPtr grid, const ActivationDesc& desc,
                   const Distribution& dist)
      : grid_(std::move(grid)), layer_(*grid_, desc, dist) {}

  void forward(const TensorRef& x, const TensorRef& y) {
    Output<T> dst(*grid_, layer_.layout(), y);
    layer_.forward(bind_input(*grid_, layer_.layout(), x, x_slot_),
                   dst.tensor());
    dst.finish();
  }
  // Reads the output where its sign is the input's (relu, leaky slope >=
  // 0), else the input.
  void backward(const TensorRef& x, const TensorRef& y, const TensorRef& dy,
                const TensorRef& dx) {
    Output<T> diff_src(*grid_, layer_.layout(), dx);
    const DistTensor<T>& diff_dst =
        bind_input(*grid_, layer_.layout(), dy, dy_slot_);
    if (layer_.desc().keeps_sign()) {
      layer_.backward_from_dst(bind_input(*grid_, layer_.layout(), y, x_slot_),
                               diff_dst, diff_src.tensor());
    } else {
      layer_.backward(bind_input(*grid_, layer_.layout(), x, x_slot_), diff_dst,
                      diff_src.tensor());
    }
    diff_src.finish();
  }

 private:
  GridPtr grid_;
  Activation<T> layer_;
  Slot<T> x_slot_, dy_slot_;
};

template <typename T>
class UpsampleModule {
 public:
  UpsampleModule(GridPtr grid, const Shape& factors, const Distribution& src)
      : grid_(std::move(grid)), layer_(*grid_, UpsampleDesc{factors}, src) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  void forward(const TensorRef& x, const TensorRef& y) {
    run_one_to_one(*grid_, layer_.src_layout(), x, slot_, layer_.dst_layout(),
                   y, out_slot_,
                   [&](auto& src, auto& dst) { layer_.forward(src, dst); });
  }
  void backward(const TensorRef& dy, const TensorRef& dx) {
    run_one_to_one(*grid_, layer_.dst_layout(), dy, slot_, layer_.src_layout(),
                   dx, out_slot_,
                   [&](auto& dd, auto& ds) { layer_.backward(dd, ds); });
  }

 private:
  GridPtr grid_;
  Upsample<T> layer_;
  Slot<T> slot_, out_slot_;
};

template <typename T>
class ConcatModule {
 public:
  ConcatModule(GridPtr grid, const std::vector<Distribution>& srcs)
      : grid_(std::move(grid)), layer_(*grid_, srcs), slots_(srcs.size()) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  void forward(const std::vector<TensorRef>& xs, const TensorRef& y) {
    std::vector<const DistTensor<T>*> srcs;
    for (size_t i = 0; i < xs.size(); ++i) {
      srcs.push_back(&bind_input(*grid_, layer_.src_layout(static_cast<int>(i)),
                                 xs[i], slots_[i]));
    }
    Output<T> dst(*grid_, layer_.dst_layout(), y);
    layer_.forward(srcs, dst.tensor());
    dst.finish();
  }
  void backward(const TensorRef& dy, const std::vector<TensorRef>& dxs) {
    std::vector<std::unique_ptr<Output<T>>> diffs;
    std::vector<DistTensor<T>*> ptrs;
    for (size_t i = 0; i < dxs.size(); ++i) {
      diffs.push_back(std::make_unique<Output<T>>(
          *grid_, layer_.src_layout(static_cast<int>(i)), dxs[i]));
      ptrs.push_back(&diffs.back()->tensor());
    }
    layer_.backward(bind_input(*grid_, layer_.dst_layout(), dy, dy_slot_),
                    ptrs);
    for (auto& d : diffs) d->finish();
  }

 private:
  GridPtr grid_;
  Concat<T> layer_;
  std::vector<Slot<T>> slots_;
  Slot<T> dy_slot_;
};

template <typename T>
void add_shards(const GridPtr& grid, const Distribution& dist,
                const TensorRef& a, const TensorRef& b, const TensorRef& y) {
  const HaloLayout layout = plain_layout(dist);
  Slot<T> sa, sb;
  Output<T> dst(*grid, layout, y);
  add(bind_input(*grid, layout, a, sa), bind_input(*grid, layout, b, sb),
      dst.tensor());
  dst.finish();
}

// Targets: values of the prediction's dtype, or int64 class indices of
// shape (N, 1, spatial...), which Python passes channels-last (dense).
template <typename T>
class LossModule {
 public:
  LossModule(GridPtr grid, const LossDesc& desc, const Distribution& pred)
      : grid_(std::move(grid)), layer_(*grid_, desc, pred) {}

  double forward(const TensorRef& x, const TensorRef& t) {
    const DistTensor<T>& pred =
        bind_input(*grid_, layer_.prediction_layout(), x, x_slot_);
    return on_target(
        t, [&](const auto& target) { return layer_.forward(pred, target); });
  }
  void backward(const TensorRef& x, const TensorRef& t, const TensorRef& dx) {
    const DistTensor<T>& pred =
        bind_input(*grid_, layer_.prediction_layout(), x, x_slot_);
    Output<T> diff(*grid_, layer_.diff_prediction_layout(), dx);
    on_target(t, [&](const auto& target) {
      layer_.backward(pred, target, diff.tensor());
    });
    diff.finish();
  }
  // forward() and backward() in one pass: the loss, its gradient in dx.
  double forward_backward(const TensorRef& x, const TensorRef& t,
                          const TensorRef& dx) {
    const DistTensor<T>& pred =
        bind_input(*grid_, layer_.prediction_layout(), x, x_slot_);
    Output<T> diff(*grid_, layer_.diff_prediction_layout(), dx);
    const double loss = on_target(t, [&](const auto& target) {
      return layer_.forward_backward(pred, target, diff.tensor());
    });
    diff.finish();
    return loss;
  }

 private:
  // fn(the target tensor): class indices, or values like the prediction.
  template <typename Fn>
  auto on_target(const TensorRef& t, Fn fn) {
    if (layer_.desc().takes_indices()) return fn(indices(t));
    return fn(bind_input(*grid_, layer_.target_layout(), t, t_slot_));
  }

  DistTensor<std::int64_t> indices(const TensorRef& t) const {
    const HaloLayout& layout = layer_.target_layout();
    require(is_local_buffer(t, layout, grid_->rank()),
            ErrorKind::kShapeMismatch, "a class-index target of shape ",
            t.shape, " for the shard ", layout.local_shape(grid_->rank()));
    return DistTensor<std::int64_t>::wrap(*grid_, layout, t.ptr<std::int64_t>(),
                                          t.shape.volume());
  }

  GridPtr grid_;
  Loss<T> layer_;
  Slot<T> x_slot_, t_slot_;
};

template <typename T>
void bind_typed(py::module_& m, const std::string& suffix) {
  py::class_<ActivationModule<T>>(m, ("Activation" + suffix).c_str())
      .def(py::init<GridPtr, const ActivationDesc&, const Distribution&>())
      .def("forward", &ActivationModule<T>::forward)
      .def("backward", &ActivationModule<T>::backward);
  py::class_<UpsampleModule<T>>(m, ("Upsample" + suffix).c_str())
      .def(py::init<GridPtr, const Shape&, const Distribution&>())
      .def("dst_shape", &UpsampleModule<T>::dst_shape)
      .def("forward", &UpsampleModule<T>::forward)
      .def("backward", &UpsampleModule<T>::backward);
  py::class_<ConcatModule<T>>(m, ("Concat" + suffix).c_str())
      .def(py::init<GridPtr, const std::vector<Distribution>&>())
      .def("dst_shape", &ConcatModule<T>::dst_shape)
      .def("forward", &ConcatModule<T>::forward)
      .def("backward", &ConcatModule<T>::backward);
  m.def(("add" + suffix).c_str(), &add_shards<T>);
  py::class_<LossModule<T>>(m, ("Loss" + suffix).c_str())
      .def(py::init<GridPtr, const LossDesc&, const Distribution&>())
      .def("forward", &LossModule<T>::forward)
      .def("backward", &LossModule<T>::backward)
      .def("forward_backward", &LossModule<T>::forward_backward);
}

}  // namespace

void bind_shard_layers(py::module_& m) {
  py::class_<ActivationDesc>(m, "ActivationDesc")
      .def_static("relu", &ActivationDesc::relu)
      .def_static("leaky_relu", &ActivationDesc::leaky_relu);
  py::enum_<LossKind>(m, "LossKind")
      .value("cross_entropy_indices", LossKind::kCrossEntropyIndices)
      .value("cross_entropy_probabilities",
             LossKind::kCrossEntropyProbabilities)
      .value("mean_squared_error", LossKind::kMeanSquaredError);
  py::enum_<LossReduction>(m, "LossReduction")
      .value("mean", LossReduction::kMean)
      .value("sum", LossReduction::kSum);
  py::class_<LossDesc>(m, "LossDesc")
      .def(py::init([](LossKind kind, LossReduction reduction,
                       std::optional<std::int64_t> ignore_index) {
             LossDesc d = LossDesc::make(kind, reduction);
             d.ignore_index = ignore_index;
             return d;
           }),
           py::arg("kind"), py::arg("reduction"), py::arg("ignore_index"));
  for_each_layer_type([&](auto tag, const std::string& suffix) {
    bind_typed<typename decltype(tag)::type>(m, suffix);
  });
}

}  // namespace distconv::python
