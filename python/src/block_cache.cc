#include "python/src/block_cache.h"

#include <cstdlib>
#include <new>
#include <utility>

namespace distconv::python {

namespace {

constexpr std::size_t kAlignment = 64;

std::size_t rounded(std::size_t bytes) {
  return bytes == 0 ? kAlignment
                    : (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

struct BlockCache::Lease::State {
  std::mutex mutex;
  std::multimap<std::size_t, void*> free;  // by rounded size
  std::size_t cached = 0;
  std::size_t limit = kNoLimit;

  // Frees kept blocks, largest first, until at most `keep` bytes remain.
  // Caller holds the mutex.
  void trim(std::size_t keep) {
    while (cached > keep && !free.empty()) {
      auto last = std::prev(free.end());
      cached -= last->first;
      std::free(last->second);
      free.erase(last);
    }
  }
  ~State() { trim(0); }
};

BlockCache::Lease::~Lease() {
  std::size_t size = rounded(bytes_);
  if (auto state = home_.lock()) {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->cached + size <= state->limit) {
      state->free.emplace(size, data_);
      state->cached += size;
      return;
    }
  }
  std::free(data_);
}

BlockCache::BlockCache() : state_(std::make_shared<Lease::State>()) {}

std::unique_ptr<BlockCache::Lease> BlockCache::acquire(std::size_t bytes) {
  std::size_t size = rounded(bytes);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->free.find(size);
    if (it != state_->free.end()) {
      data = it->second;
      state_->cached -= size;
      state_->free.erase(it);
    }
  }
  if (data == nullptr) data = std::aligned_alloc(kAlignment, size);
  if (data == nullptr) {  // the kept blocks first, then the request
    release();
    data = std::aligned_alloc(kAlignment, size);
    if (data == nullptr) throw std::bad_alloc();
  }
  return std::unique_ptr<Lease>(new Lease(state_, data, bytes));
}

std::size_t BlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->cached;
}

std::size_t BlockCache::limit() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->limit;
}

void BlockCache::set_limit(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->limit = bytes;
  state_->trim(bytes);
}

void BlockCache::release() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->trim(0);
}

}  // namespace distconv::python
