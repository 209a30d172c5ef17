#include "kernels/gpu_algo_cache.h"

namespace distconv {

std::uint64_t problem_key(const std::string& description) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : description) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::optional<GpuAlgoCache::Entry> GpuAlgoCache::find(
    std::uint64_t problem) const {
  const auto it = entries_.find(problem);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void GpuAlgoCache::put(std::uint64_t problem, Entry entry) {
  auto [it, added] = entries_.emplace(problem, entry);
  if (added) return;
  const Entry& old = it->second;
  if (preference(entry.ms, entry.algorithm, entry.math) <
      preference(old.ms, old.algorithm, old.math)) {
    it->second = entry;
  }
}

}  // namespace distconv
