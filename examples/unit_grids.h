// UnitGrids: the process grid of each unit of a training example
// (examples/networks.h): the one grid --grid= gives (or the example's
// fallback) for every unit, the grids --grids= gives one per unit, or
// with --grid=auto the planner's grid per unit (perf/model/planner.h)
// under the machine constants of --machine=.
// Rank 0 reads the machine file and broadcasts it, so every rank plans
// from the same numbers and gets the same grids (or the same error).
//
//   UnitGrids grids(MPI_COMM_WORLD, segmentation_network(shape), opt.train,
//                   Shape{1, 1, size, 1});
//   Convolution<float> conv(grids[kLevel1], ...);
//   if (!grids.same(kLevel1, kDecoder)) { ... move the skip ... }
//   grids.describe();  // "level 1 1x1x2x1, level 2 2x1x1x1, ..."
#ifndef DISTCONV_EXAMPLES_UNIT_GRIDS_H_
#define DISTCONV_EXAMPLES_UNIT_GRIDS_H_

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "distconv/distribution.h"
#include "distconv/process_grid.h"
#include "examples/training.h"
#include "perf/model/network.h"

namespace distconv {
namespace examples {

class UnitGrids {
 public:
  // Collective over `comm`: plans (kAuto; grids keeping channels whole),
  // then creates one ProcessGrid per distinct grid in unit order. Throws
  // kUnsupported, on every rank, for a given grid splitting channels.
  UnitGrids(MPI_Comm comm, const model::Network& net, const TrainOptions& opt,
            const Shape& fallback);

  const ProcessGrid& operator[](int unit) const { return *of_unit_[unit]; }
  bool same(int a, int b) const { return of_unit_[a] == of_unit_[b]; }
  int units() const { return static_cast<int>(of_unit_.size()); }
  // A tensor distributed as `d` by unit `from`, as unit `to` reads it:
  // unchanged on the same grid, else balanced over `to`'s grid (what a
  // Move delivers; perf/model/network.h costs it the same way).
  Distribution arriving(const Distribution& d, int from, int to) const;
  // "level 1 1x1x2x1, level 2 2x1x1x1, decoder 1x1x2x1", and with
  // --grid=auto the modelled step time.
  std::string describe() const;

 private:
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<ProcessGrid>> grids_;
  std::vector<const ProcessGrid*> of_unit_;
  double modelled_s_ = 0;  // kAuto only
};

}  // namespace examples
}  // namespace distconv

#endif  // DISTCONV_EXAMPLES_UNIT_GRIDS_H_
