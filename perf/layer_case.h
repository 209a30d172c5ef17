// One layer of distconv_bench in one memory space (HostSpace, or
// DeviceSpace in GPU builds): the tensors its passes read (inputs) and
// write (outputs), its parameters and their gradients, and its passes as
// calls. The GPU mode builds the same case in both spaces, gives both the
// same inputs and compares the outputs; the --eltwise driver builds its
// host cases this way.
//
//   LayerCase<float, HostSpace> c;
//   DistTensor<float>& x = c.input("x", grid, layer->src_layout());
//   float* w = c.param("w", desc.weights_shape(), /*seed=*/2);
//   c.forward = [layer, &x, w, ...] { layer->forward(x, w, ...); };
#ifndef DISTCONV_PERF_LAYER_CASE_H_
#define DISTCONV_PERF_LAYER_CASE_H_

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/dist_tensor.h"
#include "distconv/memory_space.h"
#include "perf/bench_options.h"
#include "tests/conv_check.h"

namespace distconv {

// An array of P in Space's memory, filled from the host once; read()
// copies it back.
template <typename P, typename Space>
class SpaceArray {
 public:
  explicit SpaceArray(const std::vector<P>& values)
      : size_(values.size()),
        data_(static_cast<P*>(Space::allocate(sizeof(P) * size_)),
              &Space::deallocate) {
    if constexpr (Space::kHostAccessible) {
      if (size_) std::memcpy(data_.get(), values.data(), sizeof(P) * size_);
    } else {
      Space::copy_to_device(data_.get(), values.data(), sizeof(P) * size_);
    }
  }
  P* data() const { return static_cast<P*>(data_.get()); }
  std::vector<P> read() const {
    std::vector<P> out(size_);
    if constexpr (Space::kHostAccessible) {
      if (size_) std::memcpy(out.data(), data_.get(), sizeof(P) * size_);
    } else {
      Space::copy_to_host(out.data(), data_.get(), sizeof(P) * size_);
    }
    return out;
  }

 private:
  std::size_t size_;
  std::unique_ptr<void, void (*)(void*)> data_;
};

template <typename T, typename Space>
struct LayerCase {
  using P = Compute<T>;  // parameters and their gradients (fp32 for bf16)
  struct Tensor {
    std::string name;
    std::unique_ptr<DistTensor<T, Space>> tensor;
  };
  struct Array {
    std::string name;
    Shape shape;
    SpaceArray<P, Space> array;
  };

  // Inputs are filled with random values; outputs are compared (y first,
  // then the input gradients).
  std::vector<Tensor> inputs, outputs;
  std::vector<Array> params, grads;
  // The passes; a missing one is not run. wait_gradients() runs after
  // the selected passes when backward-weights was one of them.
  std::function<void()> forward, backward_data, backward_weights,
      wait_gradients;
  // The pass that writes the parameters' gradients.
  BenchDir grads_pass = BenchDir::kBackwardWeights;
  // Seconds blocked on communication since the last call.
  std::function<double()> take_wait = [] { return 0.0; };
  std::string plan;  // the layer's describe()

  DistTensor<T, Space>& input(const std::string& name, const ProcessGrid& grid,
                              const HaloLayout& layout) {
    return add(&inputs, name, grid, layout);
  }
  DistTensor<T, Space>& output(const std::string& name,
                               const ProcessGrid& grid,
                               const HaloLayout& layout) {
    return add(&outputs, name, grid, layout);
  }
  // A parameter of `shape` holding random values from `seed`, each one T
  // holds exactly (bf16: the GPU's convolutions round their fp32
  // parameters to bf16, the host's do not).
  P* param(const std::string& name, const Shape& shape, unsigned seed) {
    std::vector<P> values = random_vector<P>(shape.volume(), seed);
    for (P& v : values) v = P(T(v));
    params.push_back({name, shape, SpaceArray<P, Space>(values)});
    return params.back().array.data();
  }
  P* grad(const std::string& name, const Shape& shape) {
    grads.push_back(
        {name, shape, SpaceArray<P, Space>(std::vector<P>(shape.volume()))});
    return grads.back().array.data();
  }

  // The passes of `dir` (forward, backward-weights, backward-data, then
  // wait_gradients()); returns the seconds blocked on communication.
  double run(BenchDir dir) {
    if (runs_pass(dir, BenchDir::kForward) && forward) forward();
    const bool weights =
        runs_pass(dir, BenchDir::kBackwardWeights) && backward_weights;
    if (weights) backward_weights();
    if (runs_pass(dir, BenchDir::kBackwardData) && backward_data) {
      backward_data();
    }
    if (weights && wait_gradients) wait_gradients();
    return take_wait();
  }

 private:
  static DistTensor<T, Space>& add(std::vector<Tensor>* list,
                                   const std::string& name,
                                   const ProcessGrid& grid,
                                   const HaloLayout& layout) {
    list->push_back(
        {name, std::make_unique<DistTensor<T, Space>>(grid, layout)});
    return *list->back().tensor;
  }
};

}  // namespace distconv

#endif  // DISTCONV_PERF_LAYER_CASE_H_
