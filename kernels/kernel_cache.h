// KernelCache: the CPU implementations that timed searches
// (ConvImplSearch::kMeasured) chose for local convolutions and poolings,
// by problem, for layers to share and for a production run to reuse from
// a file without timing again. A kernel made with a cache whose problem is
// in it runs the cached implementation without timing; the layers put
// what their ranks agreed on into it. The cache is the caller's (each rank
// its own object); none is global. share_kernel_cache()
// (layers/shared_kernel_cache.h) gives every rank all ranks' choices, for
// one file that serves every rank.
//
//   auto cache = std::make_shared<KernelCache>();
//   std::string why = cache->load("kernels.cache");  // "" when taken
//   options.cpu.search = ConvImplSearch::kMeasured;
//   options.cpu.cache = cache;
//   Convolution<float> conv(grid, desc, dist, options);  // times or reuses
//   pool_options.search = ConvImplSearch::kMeasured;
//   pool_options.cache = cache;                        // the same file
//   share_kernel_cache(grid.comm(), *cache);  // every rank's choices
//   if (grid.rank() == 0) cache->save("kernels.cache");
//
// A file is taken only whole and only from the same machine kind: its
// first lines name the CPU model, its instruction sets and the oneDNN
// version (machine()), and a checksum covers its entries. A file from
// another CPU or version, a truncated or corrupt one, is not used: load()
// says why and leaves the cache as it was, so the layers time afresh.
#ifndef DISTCONV_KERNELS_KERNEL_CACHE_H_
#define DISTCONV_KERNELS_KERNEL_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "kernels/conv_impl.h"
#include "kernels/pool_impl.h"

namespace distconv {

// A measured choice: the implementation and its time in the search that
// chose it.
template <typename Impl>
struct KernelChoice {
  Impl impl{};
  float ms = 0;
};
using ConvChoice = KernelChoice<ConvImpl>;
using PoolChoice = KernelChoice<PoolImpl>;

class KernelCache {
 public:
  // The entry for a problem (problem_key() of a kernel's description:
  // conv_problem(), pool_problem()), if any.
  std::optional<ConvChoice> find_conv(std::uint64_t problem) const;
  std::optional<PoolChoice> find_pool(std::uint64_t problem) const;
  // Records a choice; of two for one problem the faster stays (ties: the
  // earlier implementation in its list's order), as the ranks' agreement
  // picks.
  void put(std::uint64_t problem, ConvChoice choice);
  void put(std::uint64_t problem, PoolChoice choice);
  // Counts a kernel's lookup: its entry taken (a search saved), or not.
  void record_lookup(bool taken) { ++(taken ? hits_ : misses_); }

  // Entries of both kinds.
  std::size_t size() const { return conv_.size() + pool_.size(); }
  // Every entry of a kind, by problem.
  const std::unordered_map<std::uint64_t, ConvChoice>& conv_entries() const {
    return conv_;
  }
  const std::unordered_map<std::uint64_t, PoolChoice>& pool_entries() const {
    return pool_;
  }
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

  // Writes the entries to `path` (through a temporary file renamed over
  // it, so a failed write leaves an older file whole); throws
  // distconv::Error (kIo) naming the path.
  void save(const std::string& path) const;
  // Adds the entries of a file save() wrote on this kind of machine.
  // Returns "" when taken, else why not (another CPU, another oneDNN,
  // another file format, truncated, corrupt, unreadable), the cache
  // unchanged.
  std::string load(const std::string& path);

  // This machine as the file records it: the CPU model, its vector and
  // matrix instruction sets, and the oneDNN version, one line.
  static std::string machine();

 private:
  std::unordered_map<std::uint64_t, ConvChoice> conv_;
  std::unordered_map<std::uint64_t, PoolChoice> pool_;
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_KERNEL_CACHE_H_
