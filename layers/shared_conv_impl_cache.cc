#include "layers/shared_conv_impl_cache.h"

#include <cstdint>
#include <vector>

#include "distconv/internal/mpi_util.h"

namespace distconv {
namespace {

// One entry as it travels: plain words.
struct Shared {
  std::uint64_t problem;
  std::int32_t impl;
  float ms;
};

}  // namespace

void share_conv_impl_cache(MPI_Comm comm, ConvImplCache& cache) {
  std::vector<Shared> mine;
  for (const auto& [problem, e] : cache.entries()) {
    mine.push_back({problem, static_cast<std::int32_t>(e.impl), e.ms});
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
    cache.put(s.problem, {static_cast<ConvImpl>(s.impl), s.ms});
  }
}

}  // namespace distconv
