#include "layers/shared_kernel_cache.h"

#include <cstdint>
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
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  const int bytes = static_cast<int>(mine.size() * sizeof(Shared));
  std::vector<int> counts(ranks), offsets(ranks);
  internal::check_mpi(
      MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm),
      "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<Shared> all(total / sizeof(Shared));
  internal::check_mpi(
      MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(),
                     offsets.data(), MPI_BYTE, comm),
      "MPI_Allgatherv");
  for (const Shared& s : all) {
    if (s.kind == 0) {
      cache.put(s.problem, ConvChoice{static_cast<ConvImpl>(s.impl), s.ms});
    } else {
      cache.put(s.problem, PoolChoice{static_cast<PoolImpl>(s.impl), s.ms});
    }
  }
}

}  // namespace distconv
