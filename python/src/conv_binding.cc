// Convolution and transposed convolution for the PyTorch modules
// (python/distconv/nn.py: Conv2d/3d, ConvTranspose2d/3d). A module
// object holds the layer planned for one input distribution; Python
// re-plans when the distribution changes.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "distconv/conv_desc.h"
#include "distconv/deconv_desc.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "layers/convolution.h"
#include "layers/deconvolution.h"
#include "python/src/bindings.h"
#include "python/src/casters.h"
#include "python/src/element_types.h"
#include "python/src/tensor_ref.h"

namespace py = pybind11;

namespace distconv::python {
namespace {

// The passes both convolutions run the same way (Layer: Convolution<T> or
// Deconvolution<T>): forward keeps the input backward reads; backward
// writes dx when given, and dw and db when `dw` is given (this rank's
// blocks, summed over the ranks holding the same block; a pointer may be
// 0 for an empty block, so whether the gradients are wanted is told apart
// from the pointers: every rank must run backward-weights, a collective,
// or none). Weights, bias and their gradients are Compute<T> (fp32 for
// the 16-bit types).
template <typename T, typename Layer>
class ConvPasses {
 public:
  using P = Compute<T>;

  template <typename... Args>
  explicit ConvPasses(std::shared_ptr<ProcessGrid> grid, Args&&... args)
      : grid_(std::move(grid)), layer_(*grid_, std::forward<Args>(args)...) {}

  Shape dst_shape() const {
    return layer_.dst_layout().interior(grid_->rank()).extent;
  }
  std::string describe() const { return layer_.describe(); }

  Saved<T> forward(const TensorRef& x, std::uintptr_t w, std::uintptr_t b,
                   const TensorRef& y) {
    Saved<T> src = keep_input(*grid_, layer_.src_layout(), x, pool_);
    Output<T> dst(*grid_, layer_.dst_layout(), y, y_slot_);
    layer_.forward(*src, as_ptr<const P>(w), as_ptr<const P>(b), dst.tensor());
    dst.finish();
    last_ = src.get();
    return src;
  }

  void backward(const Saved<T>& src, const TensorRef& dy, std::uintptr_t w,
                const std::optional<TensorRef>& dx,
                const std::optional<std::uintptr_t>& dw, std::uintptr_t db) {
    require_saved(src);
    DistTensor<T>& diff_dst =
        bind_input(*grid_, layer_.diff_dst_layout(), dy, dy_slot_);
    if (dw) {
      layer_.backward_weights(*src, diff_dst, as_ptr<P>(*dw), as_ptr<P>(db));
    }
    if (dx) {
      Output<T> diff_src(*grid_, layer_.diff_src_layout(), *dx, dx_slot_);
      layer_.backward_data(diff_dst, as_ptr<const P>(w), diff_src.tensor());
      diff_src.finish();
    }
    if (dw) layer_.wait_gradients();
  }

 protected:
  std::shared_ptr<ProcessGrid> grid_;
  Layer layer_;
  BufferPool<T> pool_;
  Slot<T> dy_slot_, y_slot_, dx_slot_;
  const DistTensor<T>* last_ = nullptr;  // the last forward's input
};

template <typename T>
class ConvModule : public ConvPasses<T, Convolution<T>> {
  using Base = ConvPasses<T, Convolution<T>>;
  using P = typename Base::P;

 public:
  ConvModule(std::shared_ptr<ProcessGrid> grid, const ConvDesc& desc,
             const Distribution& src, ChannelParallelism channels)
      : Base(std::move(grid), desc, src, options(channels)),
        shard_layout_(plain_layout(src)) {}

  Box weights_block() const { return this->layer_.weights_block(); }
  Box bias_block() const { return this->layer_.bias_block(); }

  std::shared_ptr<KeptInput<T>> forward(const TensorRef& x, std::uintptr_t w,
                                        std::uintptr_t b, const TensorRef& y) {
    auto kept = std::make_shared<KeptInput<T>>();
    if (!in_place()) {
      kept->shard = Base::forward(x, w, b, y);
      return kept;
    }
    const ProcessGrid& grid = *this->grid_;
    kept->shard = keep_input(grid, shard_layout_, x, this->pool_);
    kept->frame = this->pool_.acquire(grid, this->layer_.src_layout());
    Output<T> dst(grid, this->layer_.dst_layout(), y, this->y_slot_);
    this->layer_.forward(*kept->shard, *kept->frame, as_ptr<const P>(w),
                         as_ptr<const P>(b), dst.tensor());
    dst.finish();
    this->last_ = kept->shard.get();
    return kept;
  }

  void backward(const std::shared_ptr<KeptInput<T>>& kept, const TensorRef& dy,
                std::uintptr_t w, const std::optional<TensorRef>& dx,
                const std::optional<std::uintptr_t>& dw, std::uintptr_t db) {
    require(kept != nullptr, ErrorKind::kState,
            "backward without the input its forward kept");
    require(!this->layer_.plan().x_full || kept->shard.get() == this->last_,
            ErrorKind::kState,
            "this convolution gathers its input channels in forward and "
            "reads them in backward: with a grid splitting channels, run "
            "backward before calling the same module again (or use one "
            "module per call)");
    if (!in_place()) {
      Base::backward(kept->shard, dy, w, dx, dw, db);
      return;
    }
    const ProcessGrid& grid = *this->grid_;
    Convolution<T>& layer = this->layer_;
    const DistTensor<T>& diff_dst =
        bind_input(grid, layer.dst_layout(), dy, this->dy_slot_);
    if (dw) {
      layer.backward_weights(*kept->shard, *kept->frame, diff_dst,
                             as_ptr<P>(*dw), as_ptr<P>(db));
    }
    if (dx) {
      if (!dy_frame_) {
        dy_frame_ =
            std::make_unique<DistTensor<T>>(grid, layer.diff_dst_layout());
      }
      Output<T> diff_src(grid, layer.diff_src_layout(), *dx, this->dx_slot_);
      layer.backward_data(diff_dst, *dy_frame_, as_ptr<const P>(w),
                          diff_src.tensor());
      diff_src.finish();
    }
    if (dw) layer.wait_gradients();
  }

 private:
  bool in_place() const {
    return this->layer_.plan().input == ConvInput::kInPlace;
  }
  static ConvolutionOptions options(ChannelParallelism channels) {
    ConvolutionOptions o;
    o.channels = channels;
    o.input = ConvInput::kInPlace;
    return o;
  }

  HaloLayout shard_layout_;                  // the input's shard, read in place
  std::unique_ptr<DistTensor<T>> dy_frame_;  // diff_dst's edges and halos
};

// The transposed convolution writes its output and reads its output
// gradient in place (planned with ConvInput::kInPlace): the caller's
// tensors where they are dense channels-last, with one frame, the
// module's, for the edges and halos of every pass.
template <typename T>
class DeconvModule : public ConvPasses<T, Deconvolution<T>> {
  using Base = ConvPasses<T, Deconvolution<T>>;
  using P = typename Base::P;

 public:
  DeconvModule(std::shared_ptr<ProcessGrid> grid, const DeconvDesc& desc,
               const Distribution& src)
      : Base(std::move(grid), desc, src, options()) {}

  Saved<T> forward(const TensorRef& x, std::uintptr_t w, std::uintptr_t b,
                   const TensorRef& y) {
    const ProcessGrid& grid = *this->grid_;
    Deconvolution<T>& layer = this->layer_;
    Saved<T> src = keep_input(grid, layer.src_layout(), x, this->pool_);
    Output<T> dst(grid, layer.shard_layout(), y, this->y_slot_);
    layer.forward(*src, as_ptr<const P>(w), as_ptr<const P>(b), dst.tensor(),
                  frame());
    dst.finish();
    return src;
  }

  void backward(const Saved<T>& src, const TensorRef& dy, std::uintptr_t w,
                const std::optional<TensorRef>& dx,
                const std::optional<std::uintptr_t>& dw, std::uintptr_t db) {
    require_saved(src);
    const ProcessGrid& grid = *this->grid_;
    Deconvolution<T>& layer = this->layer_;
    const DistTensor<T>& diff_dst =
        bind_input(grid, layer.shard_layout(), dy, this->dy_slot_);
    if (dw) {
      layer.backward_weights(*src, diff_dst, frame(), as_ptr<P>(*dw),
                             as_ptr<P>(db));
    }
    if (dx) {
      Output<T> diff_src(grid, layer.diff_src_layout(), *dx, this->dx_slot_);
      layer.backward_data(diff_dst, frame(), as_ptr<const P>(w),
                          diff_src.tensor());
      diff_src.finish();
    }
    if (dw) layer.wait_gradients();
  }

 private:
  static DeconvolutionOptions options() {
    DeconvolutionOptions o;
    o.input = ConvInput::kInPlace;
    return o;
  }
  DistTensor<T>& frame() {
    if (!frame_) {
      frame_ = std::make_unique<DistTensor<T>>(*this->grid_,
                                               this->layer_.dst_layout());
    }
    return *frame_;
  }

  std::unique_ptr<DistTensor<T>> frame_;  // the output side's edges, halos
};

template <typename T>
void bind_typed(py::module_& m, const std::string& suffix) {
  py::class_<DistTensor<T>, Saved<T>>(m, ("Buffer" + suffix).c_str());
  // (Also what pooling's forward returns: registered here, once.)
  py::class_<KeptInput<T>, std::shared_ptr<KeptInput<T>>>(
      m, ("KeptInput" + suffix).c_str());
  py::class_<ConvModule<T>>(m, ("Convolution" + suffix).c_str())
      .def(py::init<std::shared_ptr<ProcessGrid>, const ConvDesc&,
                    const Distribution&, ChannelParallelism>())
      .def("dst_shape", &ConvModule<T>::dst_shape)
      .def("weights_block", &ConvModule<T>::weights_block)
      .def("bias_block", &ConvModule<T>::bias_block)
      .def("describe", &ConvModule<T>::describe)
      .def("forward", &ConvModule<T>::forward)
      .def("backward", &ConvModule<T>::backward);
  py::class_<DeconvModule<T>>(m, ("Deconvolution" + suffix).c_str())
      .def(py::init<std::shared_ptr<ProcessGrid>, const DeconvDesc&,
                    const Distribution&>())
      .def("dst_shape", &DeconvModule<T>::dst_shape)
      .def("describe", &DeconvModule<T>::describe)
      .def("forward", &DeconvModule<T>::forward)
      .def("backward", &DeconvModule<T>::backward);
}

}  // namespace

void bind_conv(py::module_& m) {
  py::enum_<ChannelParallelism>(m, "ChannelParallelism")
      .value("stationary_output", ChannelParallelism::kStationaryOutput)
      .value("stationary_input", ChannelParallelism::kStationaryInput)
      .value("stationary_weights", ChannelParallelism::kStationaryWeights);
  py::class_<ConvDesc>(m, "ConvDesc")
      .def(py::init([](Index in, Index out, const Shape& kernel,
                       const Shape& stride, const Shape& dilation,
                       const Shape& padding_lower, const Shape& padding_upper,
                       Index groups, bool bias, bool circular) {
             ConvDesc d = ConvDesc::make(in, out, kernel);
             if (circular) {
               d.padding_mode.assign(kernel.ndims(), PaddingMode::kCircular);
             }
             d.stride = stride;
             d.dilation = dilation;
             d.padding_lower = padding_lower;
             d.padding_upper = padding_upper;
             d.groups = groups;
             d.bias = bias ? ConvBias::kAdd : ConvBias::kNone;
             return d;
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel"),
           py::arg("stride"), py::arg("dilation"), py::arg("padding_lower"),
           py::arg("padding_upper"), py::arg("groups"), py::arg("bias"),
           py::arg("circular") = false);
  py::class_<DeconvDesc>(m, "DeconvDesc")
      .def(py::init([](Index in, Index out, const Shape& kernel,
                       const Shape& stride, const Shape& dilation,
                       const Shape& padding_lower, const Shape& padding_upper,
                       const Shape& output_padding, Index groups, bool bias) {
             DeconvDesc d = DeconvDesc::make(in, out, kernel);
             d.stride = stride;
             d.dilation = dilation;
             d.padding_lower = padding_lower;
             d.padding_upper = padding_upper;
             d.output_padding = output_padding;
             d.groups = groups;
             d.bias = bias ? ConvBias::kAdd : ConvBias::kNone;
             return d;
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel"),
           py::arg("stride"), py::arg("dilation"), py::arg("padding_lower"),
           py::arg("padding_upper"), py::arg("output_padding"),
           py::arg("groups"), py::arg("bias"));
  for_each_layer_type([&](auto tag, const std::string& suffix) {
    bind_typed<typename decltype(tag)::type>(m, suffix);
  });
}

}  // namespace distconv::python
