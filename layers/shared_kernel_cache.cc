#include "layers/shared_kernel_cache.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "distconv/internal/mpi_util.h"

namespace distconv {
namespace {

// One entry as it travels: plain words.
struct Shared {
  std::uint64_t problem;
  std::int32_t kind;  // 0: a convolution's, 1: a pooling's
  std::int32_t impl;
  float ms;
};

}  // namespace

void share_kernel_cache(MPI_Comm comm, KernelCache& cache) {
  std::vector<Shared> mine;
  for (const auto& [problem, e] : cache.conv_entries()) {
    mine.push_back({problem, 0, static_cast<std::int32_t>(e.impl), e.ms});
  }
  for (const auto& [problem, e] : cache.pool_entries()) {
    mine.push_back({problem, 1, static_cast<std::int32_t>(e.impl), e.ms});
  }
  const std::string bytes(reinterpret_cast<const char*>(mine.data()),
                          mine.size() * sizeof(Shared));
  std::vector<Shared> all;
  for (const std::string& rank : internal::allgather_bytes(comm, bytes)) {
    if (rank.empty()) continue;
    const size_t first = all.size();
    all.resize(first + rank.size() / sizeof(Shared));
    std::memcpy(all.data() + first, rank.data(),
                (all.size() - first) * sizeof(Shared));
  }
  for (const Shared& s : all) {
    if (s.kind == 0) {
      cache.put(s.problem, ConvChoice{static_cast<ConvImpl>(s.impl), s.ms});
    } else {
      cache.put(s.problem, PoolChoice{static_cast<PoolImpl>(s.impl), s.ms});
    }
  }
}

}  // namespace distconv
