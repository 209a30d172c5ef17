#include "layers/internal/algo_agreement.h"

#include <climits>
#include <map>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

std::vector<AlgoChoice> agreed_algorithms(const std::vector<AlgoChoice>& mine,
                                          const std::vector<AlgoChoice>& all) {
  // The preferred choice per problem.
  const auto rank = [](const AlgoChoice& c) {
    return preference(c.ms, c.algorithm, c.math);
  };
  std::map<std::uint64_t, AlgoChoice> best;
  for (const AlgoChoice& c : all) {
    auto [it, added] = best.emplace(c.problem, c);
    if (!added && rank(c) < rank(it->second)) it->second = c;
  }
  std::vector<AlgoChoice> out;
  out.reserve(mine.size());
  for (const AlgoChoice& c : mine) {
    const auto it = best.find(c.problem);
    out.push_back(it == best.end() ? c : it->second);
  }
  return out;
}

std::vector<AlgoChoice> agree_on_algorithms(
    MPI_Comm comm, const std::vector<AlgoChoice>& mine) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  constexpr int kBytes = static_cast<int>(sizeof(AlgoChoice));
  require(mine.size() <= static_cast<std::size_t>(INT_MAX / kBytes / size),
          ErrorKind::kUnsupported, "too many kernels to agree on: ",
          mine.size());
  const int count = static_cast<int>(mine.size()) * kBytes;
  std::vector<int> counts(size), displs(size);
  check_mpi(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm),
            "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<AlgoChoice> all(static_cast<std::size_t>(total / kBytes));
  check_mpi(MPI_Allgatherv(mine.data(), count, MPI_BYTE, all.data(),
                           counts.data(), displs.data(), MPI_BYTE, comm),
            "MPI_Allgatherv");
  return agreed_algorithms(mine, all);
}

}  // namespace distconv::internal
