#include "python/src/tensor_ref.h"

#include <cstdint>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "layers/copy_shard.h"

namespace distconv::python {

bool is_local_buffer(const TensorRef& t, const HaloLayout& layout, int rank) {
  return t.shape == layout.local_shape(rank) &&
         layout.interior(rank).extent == t.shape &&
         is_dense(t.shape, t.strides, layout.storage_order()) &&
         (t.data != 0 || t.shape.volume() == 0);
}

namespace {

template <typename T>
DistTensor<T>& bind(const ProcessGrid& grid, const HaloLayout& layout,
                    const TensorRef& t, Slot<T>& slot) {
  slot.copied = !is_local_buffer(t, layout, grid.rank());
  if (!slot.copied) {
    slot.wrapped.emplace(
        DistTensor<T>::wrap(grid, layout, t.ptr<T>(), t.shape.volume()));
    return *slot.wrapped;
  }
  require(t.shape == layout.shard(grid.rank()).extent,
          ErrorKind::kShapeMismatch, "a tensor of shape ", t.shape,
          " for the shard ", layout.shard(grid.rank()).extent);
  if (!slot.copy || slot.copy->layout() != layout) {
    slot.copy = std::make_unique<DistTensor<T>>(grid, layout);
  }
  return *slot.copy;
}

}  // namespace

template <typename T>
DistTensor<T>& bind_input(const ProcessGrid& grid, const HaloLayout& layout,
                          const TensorRef& t, Slot<T>& slot) {
  DistTensor<T>& bound = bind(grid, layout, t, slot);
  if (slot.copied) copy_shard(t.view<const T>(), bound);
  return bound;
}

template <typename T>
DistTensor<T>& bind_output(const ProcessGrid& grid, const HaloLayout& layout,
                           const TensorRef& t, Slot<T>& slot) {
  return bind(grid, layout, t, slot);
}

template <typename T>
void finish_output(const TensorRef& t, const Slot<T>& slot) {
  if (slot.copied) copy_shard(*slot.copy, t.view<T>());
}

template <typename T>
std::shared_ptr<DistTensor<T>> BufferPool<T>::acquire(
    const ProcessGrid& grid, const HaloLayout& layout) {
  std::unique_ptr<DistTensor<T>> buffer;
  for (auto it = free_->begin(); it != free_->end(); ++it) {
    if ((*it)->layout() == layout && &(*it)->grid() == &grid) {
      buffer = std::move(*it);
      free_->erase(it);
      break;
    }
  }
  if (!buffer) buffer = std::make_unique<DistTensor<T>>(grid, layout);
  std::weak_ptr<List> home = free_;
  return std::shared_ptr<DistTensor<T>>(
      buffer.release(), [home](DistTensor<T>* p) {
        std::unique_ptr<DistTensor<T>> owned(p);
        if (auto list = home.lock()) list->push_back(std::move(owned));
      });
}

template <typename T>
Saved<T> keep_input(const ProcessGrid& grid, const HaloLayout& layout,
                    const TensorRef& x, BufferPool<T>& pool) {
  if (is_local_buffer(x, layout, grid.rank())) {
    return std::make_shared<DistTensor<T>>(
        DistTensor<T>::wrap(grid, layout, x.ptr<T>(), x.shape.volume()));
  }
  Saved<T> kept = pool.acquire(grid, layout);
  copy_shard(x.view<const T>(), *kept);
  return kept;
}

#define DISTCONV_INSTANTIATE(T)                                                \
  template DistTensor<T>& bind_input<T>(const ProcessGrid&, const HaloLayout&, \
                                        const TensorRef&, Slot<T>&);           \
  template DistTensor<T>& bind_output<T>(                                      \
      const ProcessGrid&, const HaloLayout&, const TensorRef&, Slot<T>&);      \
  template void finish_output<T>(const TensorRef&, const Slot<T>&);            \
  template class BufferPool<T>;                                                \
  template Saved<T> keep_input<T>(const ProcessGrid&, const HaloLayout&,       \
                                  const TensorRef&, BufferPool<T>&);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
DISTCONV_FOR_EACH_LABEL_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::python
