#include "layers/internal/algo_agreement.h"

#include <climits>
#include <map>
#include <utility>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

std::uint64_t problem_key(const std::string& description) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : description) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<int> agreed_algorithms(const std::vector<AlgoChoice>& mine,
                                   const std::vector<AlgoChoice>& all) {
  // The best (time, algorithm) per problem.
  std::map<std::uint64_t, std::pair<float, int>> best;
  for (const AlgoChoice& c : all) {
    const std::pair<float, int> here{c.ms, c.algorithm};
    auto [it, added] = best.emplace(c.problem, here);
    if (!added && here < it->second) it->second = here;
  }
  std::vector<int> out;
  out.reserve(mine.size());
  for (const AlgoChoice& c : mine) {
    const auto it = best.find(c.problem);
    out.push_back(it == best.end() ? c.algorithm : it->second.second);
  }
  return out;
}

std::vector<int> agree_on_algorithms(MPI_Comm comm,
                                     const std::vector<AlgoChoice>& mine) {
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
