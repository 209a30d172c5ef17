// Pooling and batch normalisation for the PyTorch modules
// (python/distconv/nn.py: MaxPool2d/3d, AvgPool2d/3d, BatchNorm2d/3d).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "distconv/pool_desc.h"
#include "layers/batch_norm.h"
#include "layers/pooling.h"
#include "python/src/bindings.h"
#include "python/src/casters.h"
#include "python/src/element_types.h"
#include "python/src/tensor_ref.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

// Pooling reads its input, and writes its gradient, in place: the
// caller's tensors where they are dense channels-last, with frames for the
// edges and halos (the input's kept from forward to backward, the
// gradient's by the module for every call).
template <typename T>
class PoolModule {
 public:
  PoolModule(std::shared_ptr<ProcessGrid> grid, const PoolDesc& desc,
             const Distribution& src)
      : grid_(std::move(grid)), layer_(*grid_, desc, src, options()) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  std::string describe() const { return layer_.describe(); }

  std::shared_ptr<KeptInput<T>> forward(const TensorRef& x,
                                        const TensorRef& y) {
    auto kept = std::make_shared<KeptInput<T>>();
    kept->shard = keep_input(*grid_, layer_.shard_layout(), x, pool_);
    kept->frame = pool_.acquire(*grid_, layer_.src_layout());
    Output<T> dst(*grid_, layer_.dst_layout(), y);
    layer_.forward(*kept->shard, *kept->frame, dst.tensor());
    dst.finish();
    return kept;
  }
  void backward(const std::shared_ptr<KeptInput<T>>& kept, const TensorRef& dy,
                const TensorRef& dx) {
    require(kept != nullptr, ErrorKind::kState,
            "backward without the input its forward kept");
    if (!dx_frame_) {
      dx_frame_ =
          std::make_unique<DistTensor<T>>(*grid_, layer_.diff_src_layout());
    }
    Output<T> diff_src(*grid_, layer_.shard_layout(), dx, dx_slot_);
    layer_.backward(*kept->shard, *kept->frame,
                    bind_input(*grid_, layer_.diff_dst_layout(), dy, dy_slot_),
                    diff_src.tensor(), *dx_frame_);
    diff_src.finish();
  }

 private:
  static PoolingOptions options() {
    PoolingOptions o;
    o.input = ConvInput::kInPlace;
    return o;
  }

  std::shared_ptr<ProcessGrid> grid_;
  Pooling<T> layer_;
  BufferPool<T> pool_;
  Slot<T> dy_slot_, dx_slot_;
  std::unique_ptr<DistTensor<T>> dx_frame_;  // diff_src's edges and halos
};

// Running statistics stay in the PyTorch module's buffers: they are
// handed in before each forward and read back after a training one. Scale,
// shift and their gradients are Compute<T> (fp32 for the 16-bit types).
template <typename T>
class BatchNormModule {
 public:
  using P = Compute<T>;

  BatchNormModule(std::shared_ptr<ProcessGrid> grid, const Distribution& src,
                  double epsilon, double momentum, BatchNormStats stats)
      : grid_(std::move(grid)),
        layer_(*grid_, src, options(epsilon, momentum, stats)) {}

  std::string describe() const { return layer_.describe(); }

  // mean and variance: this module's running statistics (C doubles), read
  // and, in training, updated.
  Saved<T> forward(const TensorRef& x, std::uintptr_t scale,
                   std::uintptr_t shift, const TensorRef& y,
                   std::uintptr_t mean, std::uintptr_t variance,
                   bool training) {
    layer_.set_mode(training ? BatchNormMode::kTraining
                             : BatchNormMode::kInference);
    layer_.set_running_stats(as_ptr<const double>(mean),
                             as_ptr<const double>(variance));
    Saved<T> src = keep_input(*grid_, layer_.src_layout(), x, pool_);
    Output<T> dst(*grid_, layer_.dst_layout(), y);
    layer_.forward(*src, as_ptr<const P>(scale), as_ptr<const P>(shift),
                   dst.tensor());
    dst.finish();
    if (training) {
      const auto& m = layer_.running_mean();
      const auto& v = layer_.running_variance();
      std::copy(m.begin(), m.end(), as_ptr<double>(mean));
      std::copy(v.begin(), v.end(), as_ptr<double>(variance));
    }
    return src;
  }
  void backward(const Saved<T>& src, const TensorRef& dy, std::uintptr_t scale,
                const TensorRef& dx, std::uintptr_t dscale,
                std::uintptr_t dshift) {
    require_saved(src);
    Output<T> diff_src(*grid_, layer_.diff_src_layout(), dx);
    layer_.backward(*src,
                    bind_input(*grid_, layer_.diff_dst_layout(), dy, dy_slot_),
                    as_ptr<const P>(scale), diff_src.tensor(),
                    as_ptr<P>(dscale), as_ptr<P>(dshift));
    diff_src.finish();
  }

 private:
  static BatchNormOptions options(double epsilon, double momentum,
                                  BatchNormStats stats) {
    BatchNormOptions o;
    o.epsilon = epsilon;
    o.momentum = momentum;
    o.stats = stats;
    return o;
  }

  std::shared_ptr<ProcessGrid> grid_;
  BatchNorm<T> layer_;
  BufferPool<T> pool_;
  Slot<T> dy_slot_;
};

template <typename T>
void bind_typed(py::module_& m, const std::string& suffix) {
  py::class_<PoolModule<T>>(m, ("Pooling" + suffix).c_str())
      .def(py::init<std::shared_ptr<ProcessGrid>, const PoolDesc&,
                    const Distribution&>())
      .def("dst_shape", &PoolModule<T>::dst_shape)
      .def("describe", &PoolModule<T>::describe)
      .def("forward", &PoolModule<T>::forward)
      .def("backward", &PoolModule<T>::backward);
  py::class_<BatchNormModule<T>>(m, ("BatchNorm" + suffix).c_str())
      .def(py::init<std::shared_ptr<ProcessGrid>, const Distribution&, double,
                    double, BatchNormStats>())
      .def("describe", &BatchNormModule<T>::describe)
      .def("forward", &BatchNormModule<T>::forward)
      .def("backward", &BatchNormModule<T>::backward);
}

}  // namespace

void bind_window(py::module_& m) {
  py::enum_<PoolKind>(m, "PoolKind")
      .value("max", PoolKind::kMax)
      .value("average_include_padding", PoolKind::kAverageIncludePadding)
      .value("average_exclude_padding", PoolKind::kAverageExcludePadding);
  py::enum_<BatchNormStats>(m, "BatchNormStats")
      .value("shard", BatchNormStats::kShard)
      .value("sample_block", BatchNormStats::kSampleBlock)
      .value("global_", BatchNormStats::kGlobal);
  py::class_<PoolDesc>(m, "PoolDesc")
      .def(py::init([](PoolKind kind, const Shape& kernel, const Shape& stride,
                       const Shape& padding) {
             PoolDesc d = PoolDesc::make(kind, kernel);
             d.stride = stride;
             d.padding_lower = d.padding_upper = padding;
             return d;
           }),
           py::arg("kind"), py::arg("kernel"), py::arg("stride"),
           py::arg("padding"));
  for_each_layer_type([&](auto tag, const std::string& suffix) {
    bind_typed<typename decltype(tag)::type>(m, suffix);
  });
}

}  // namespace distconv::python
