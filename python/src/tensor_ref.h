// How the extension module reaches a PyTorch tensor's memory without
// linking libtorch: Python passes (data_ptr, shape, strides) (strides in
// elements; python/distconv/_tensors.py), and these helpers turn that into
// the library's tensors.
//
//  - bind_input: the tensor's own memory when it is the layout's local
//    buffer (no halos on this rank, channels-last strides), else a copy
//    into a buffer the caller keeps (a Slot) for the next call.
//  - bind_output: the tensor's own memory; outputs are allocated by the
//    Python side in the layout's strides (channels-last), so the library
//    writes its results where PyTorch reads them.
//  - BufferPool: buffers with halos that must live from a forward pass to
//    its backward (a convolution's input), handed out and returned when
//    the last holder lets go, so a module called twice before backward
//    keeps both inputs.
#ifndef DISTCONV_PYTHON_SRC_TENSOR_REF_H_
#define DISTCONV_PYTHON_SRC_TENSOR_REF_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/distribution.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "distconv/process_grid.h"
#include "distconv/shape.h"
#include "distconv/strided_view.h"

namespace distconv::python {

struct TensorRef {
  std::uintptr_t data = 0;
  Shape shape;    // (N, C, spatial...)
  Shape strides;  // in elements, per logical dimension

  template <typename T>
  StridedView<T> view() const {
    return StridedView<T>(reinterpret_cast<T*>(data), shape, strides);
  }
  template <typename T>
  T* ptr() const {
    return reinterpret_cast<T*>(data);
  }
};

// A dense array Python passes as its data pointer (0: none).
template <typename T>
T* as_ptr(std::uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

// A layout with no halos in the library's storage order (channels-last):
// what tensors that leave and enter PyTorch are bound to.
inline HaloLayout plain_layout(const Distribution& dist) {
  return HaloLayout(dist).with_storage(StorageOrder::kChannelsLast);
}

// Whether `t` is exactly this rank's local buffer of `layout`.
bool is_local_buffer(const TensorRef& t, const HaloLayout& layout, int rank);

// Where bind_input and bind_output keep what they made: the tensor
// wrapped, or a buffer of the layout (kept for the next call) and whether
// it stands in for the tensor.
template <typename T>
struct Slot {
  std::optional<DistTensor<T>> wrapped;
  std::unique_ptr<DistTensor<T>> copy;
  bool copied = false;
};

template <typename T>
DistTensor<T>& bind_input(const ProcessGrid& grid, const HaloLayout& layout,
                          const TensorRef& t, Slot<T>& slot);

// The tensor the layer writes: t itself when it is the layout's local
// buffer, else the slot's buffer, whose shard finish_output then copies
// into t.
template <typename T>
DistTensor<T>& bind_output(const ProcessGrid& grid, const HaloLayout& layout,
                           const TensorRef& t, Slot<T>& slot);
template <typename T>
void finish_output(const TensorRef& t, const Slot<T>& slot);

// An output bound for one call: out.tensor() for the layer, then
// out.finish(). A layer whose output has halos (pooling's input gradient,
// the transposed convolution's output) writes a buffer of the layout:
// given `slot`, kept by the module, that buffer serves every call, not
// allocated (and its pages faulted in) anew each time.
template <typename T>
class Output {
 public:
  Output(const ProcessGrid& grid, const HaloLayout& layout, const TensorRef& t)
      : Output(grid, layout, t, own_) {}
  Output(const ProcessGrid& grid, const HaloLayout& layout, const TensorRef& t,
         Slot<T>& slot)
      : t_(t), slot_(&slot), tensor_(&bind_output(grid, layout, t, slot)) {}
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  DistTensor<T>& tensor() { return *tensor_; }
  void finish() { finish_output(t_, *slot_); }

 private:
  TensorRef t_;
  Slot<T> own_;
  Slot<T>* slot_;
  DistTensor<T>* tensor_;
};

// One pass of a layer that reads one tensor and writes one:
// pass(input, output) with `in` bound to `in_layout` (through `slot`)
// and `out` to `out_layout` (through `out_slot`).
template <typename T, typename Pass>
void run_one_to_one(const ProcessGrid& grid, const HaloLayout& in_layout,
                    const TensorRef& in, Slot<T>& slot,
                    const HaloLayout& out_layout, const TensorRef& out,
                    Slot<T>& out_slot, Pass pass) {
  Output<T> o(grid, out_layout, out, out_slot);
  pass(bind_input(grid, in_layout, in, slot), o.tensor());
  o.finish();
}

template <typename T>
using Saved = std::shared_ptr<DistTensor<T>>;

template <typename T>
class BufferPool;

// The input of a layer as its backward pass will read it: x's own memory
// when it is the layout's local buffer (the caller keeps x alive until
// then), else a copy in a buffer from `pool` with room for the halos.
template <typename T>
Saved<T> keep_input(const ProcessGrid& grid, const HaloLayout& layout,
                    const TensorRef& x, BufferPool<T>& pool);

// Throws kState for a null Saved (a backward without its forward).
template <typename T>
void require_saved(const Saved<T>& saved) {
  require(saved != nullptr, ErrorKind::kState,
          "backward without the input its forward kept");
}

// What the forward of a layer reading in place keeps for its backward:
// the input's shard (the caller's tensor itself when dense channels-last,
// else a copy) and the frame holding its edges and halos. A layer reading
// from a buffer with halos keeps that buffer in `shard`, no frame.
template <typename T>
struct KeptInput {
  Saved<T> shard, frame;
};

template <typename T>
class BufferPool {
 public:
  BufferPool() : free_(std::make_shared<List>()) {}
  // A buffer of `layout`; its halo cells keep what the last user left.
  std::shared_ptr<DistTensor<T>> acquire(const ProcessGrid& grid,
                                         const HaloLayout& layout);

 private:
  using List = std::vector<std::unique_ptr<DistTensor<T>>>;
  std::shared_ptr<List> free_;
};

}  // namespace distconv::python

#endif  // DISTCONV_PYTHON_SRC_TENSOR_REF_H_
