// GpuAlgoCache: the convolution algorithms that timed cuDNN searches chose,
// by problem, for layers to share. A kernel made with a cache
// (GpuConvOptions::cache, with GpuAlgoSearch::kMeasured) whose problem is
// in it runs the cached algorithm (with its math, on the same layout)
// without timing cuDNN's again, where that algorithm is usable under its
// own options (workspace limit); the layers put what their ranks agreed
// on into it. The cache is the caller's: share
// one among the layers of a network (each rank its own object), or give
// each layer its own; none is global. Plain C++ (no CUDA include).
//
//   auto cache = std::make_shared<GpuAlgoCache>();
//   options.gpu.search = GpuAlgoSearch::kMeasured;
//   options.gpu.cache = cache;
//   Convolution<float, DeviceSpace> a(grid, desc, dist, options);  // times
//   Convolution<float, DeviceSpace> b(grid, desc, dist, options);  // reuses
//
// Ranks stay agreed whatever their caches hold: a cached choice enters the
// layer's agreement with its recorded time, as a timed one does.
#ifndef DISTCONV_KERNELS_GPU_ALGO_CACHE_H_
#define DISTCONV_KERNELS_GPU_ALGO_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

namespace distconv {

// A 64-bit FNV-1a hash of a problem's canonical description (the pass,
// types, window and views: CudnnConv::problem()).
std::uint64_t problem_key(const std::string& description);

// How choices of one problem rank, the preferred first: the faster, then
// the lower algorithm number, then the lower math (the cache and the
// ranks' agreement both keep the least).
inline std::tuple<float, int, int> preference(float ms, int algorithm,
                                              int math) {
  return {ms, algorithm, math};
}

class GpuAlgoCache {
 public:
  struct Entry {
    int algorithm = 0;    // cuDNN's number for it
    int math = 0;         // its cudnnMathType_t
    float ms = 0;         // its time in the search that chose it
    bool copies = false;  // timed on dense copies rather than the views
  };

  // The entry for a problem, if any.
  std::optional<Entry> find(std::uint64_t problem) const;
  // Records a choice; of two for one problem the preferred stays
  // (preference()), as the ranks' agreement picks.
  void put(std::uint64_t problem, Entry entry);
  // Counts a kernel's lookup (one per kernel): its entry taken (a search
  // saved), or not (the kernel searched).
  void record_lookup(bool taken) { ++(taken ? hits_ : misses_); }

  std::size_t size() const { return entries_.size(); }
  // Kernels that took a cached choice, and kernels that searched.
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_GPU_ALGO_CACHE_H_
