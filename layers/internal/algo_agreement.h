// Internal: the ranks of a layer agreeing on the algorithm of each local
// convolution problem. With a timed search (GpuAlgoSearch::kMeasured) each
// rank times cuDNN's algorithms on its own pieces, so two ranks with the
// same problem may pick different (equally correct) algorithms, and run at
// different speeds. The layer gathers every rank's choices and each rank
// then runs, for every problem, the fastest choice any rank made for it:
// the same algorithm for the same shapes everywhere.
//
//   std::vector<AlgoChoice> mine = {{key, algo, math, ms}, ...};
//   std::vector<AlgoChoice> use = agree_on_algorithms(grid.comm(), mine);
#ifndef DISTCONV_LAYERS_INTERNAL_ALGO_AGREEMENT_H_
#define DISTCONV_LAYERS_INTERNAL_ALGO_AGREEMENT_H_

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gpu_algo_cache.h"

namespace distconv::internal {

// One kernel's pick: `problem` identifies its pass and shapes (equal on
// every rank for equal problems: problem_key(), kernels/gpu_algo_cache.h),
// `algorithm` and `math` the one chosen (cuDNN's numbers), `ms` its
// measured time (0 when not measured).
struct AlgoChoice {
  std::uint64_t problem = 0;
  std::int32_t algorithm = 0;
  std::int32_t math = 0;
  float ms = 0;
  std::int32_t unused = 0;  // zeroed padding: choices travel as bytes
};

// For each of `mine`, the choice to run: among the choices in `all`
// (every rank's) for the same problem, the preferred (preference(): the
// fastest; ties go to the lower algorithm number, then the lower math). Pure;
// the same answer on every rank given the same `all`.
std::vector<AlgoChoice> agreed_algorithms(const std::vector<AlgoChoice>& mine,
                                          const std::vector<AlgoChoice>& all);

// Collective over `comm`: gathers every rank's choices and returns
// agreed_algorithms(mine, all of them). A rank may bring none.
std::vector<AlgoChoice> agree_on_algorithms(
    MPI_Comm comm, const std::vector<AlgoChoice>& mine);

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_ALGO_AGREEMENT_H_
