// Host memory for the tensors the PyTorch front end hands out (layer
// outputs and input gradients), kept for reuse: a block whose tensor died
// goes back to its cache, and the next request of the same size gets it
// with its pages already mapped. A training step that allocated fresh
// memory for each output would spend much of its time in page faults on
// large images (docs/pytorch.md, "Memory"). The cache is what PyTorch's
// CUDA caching allocator is for device memory, for this module's tensors
// only.
#ifndef DISTCONV_PYTHON_SRC_BLOCK_CACHE_H_
#define DISTCONV_PYTHON_SRC_BLOCK_CACHE_H_

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace distconv::python {

class BlockCache {
 public:
  // Free blocks beyond `limit` bytes are released instead of kept.
  static constexpr std::size_t kNoLimit = ~std::size_t{0};

  // One block in use: returned to its cache when destroyed (or freed when
  // the cache is gone or full).
  class Lease {
   public:
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    void* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

   private:
    friend class BlockCache;
    struct State;
    Lease(std::weak_ptr<State> home, void* data, std::size_t bytes)
        : home_(std::move(home)), data_(data), bytes_(bytes) {}
    std::weak_ptr<State> home_;
    void* data_;
    std::size_t bytes_;
  };

  BlockCache();

  // A 64-byte aligned block of `bytes` (its contents are what the last
  // user left). Throws std::bad_alloc (MemoryError in Python) when the
  // allocation fails.
  std::unique_ptr<Lease> acquire(std::size_t bytes);

  std::size_t cached_bytes() const;  // free blocks kept
  std::size_t limit() const;
  void set_limit(std::size_t bytes);  // releases what is over it now
  void release();                     // frees every kept block

 private:
  std::shared_ptr<Lease::State> state_;
};

}  // namespace distconv::python

#endif  // DISTCONV_PYTHON_SRC_BLOCK_CACHE_H_
