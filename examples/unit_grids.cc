#include "examples/unit_grids.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "distconv/error.h"
#include "perf/model/machine.h"
#include "perf/model/planner.h"

namespace distconv {
namespace examples {
namespace {

// Rank 0's copy of the file at `path` on every rank (empty everywhere
// when rank 0 cannot read it).
std::string broadcast_file(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string text;
  long long size = -1;
  if (rank == 0) {
    std::ifstream in(path);
    if (in) {
      std::ostringstream s;
      s << in.rdbuf();
      text = s.str();
      size = static_cast<long long>(text.size());
    }
  }
  MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm);
  require(size >= 0, ErrorKind::kInvalidArgument, "--grid=auto plans with ",
          "the machine constants in '", path, "', which cannot be read (run ",
          "from the repository root, or pass --machine=FILE: ",
          "perf/model/calibrate writes one)");
  text.resize(static_cast<size_t>(size));
  MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  return text;
}

}  // namespace

UnitGrids::UnitGrids(MPI_Comm comm, const model::Network& net,
                     const TrainOptions& opt, const Shape& fallback) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  std::vector<Shape> shapes;
  if (opt.grid_mode == GridMode::kAuto) {
    const model::Machine m = model::parse_machine(
        broadcast_file(comm, opt.machine_path), opt.machine_path);
    model::PlannerOptions po;
    po.ranks = ranks;
    po.channels = model::ChannelSplits::kNone;  // parameters stay whole
    const model::Plan plan = model::plan_network(net, po, m);
    shapes = plan.grids;
    modelled_s_ = plan.prediction.step_s();
  } else if (opt.grid_mode == GridMode::kPerUnit) {
    require(opt.unit_grids.size() == net.units.size(),
            ErrorKind::kInvalidArgument, "--grids= gives ",
            opt.unit_grids.size(), " grid(s); ", net.name, " has ",
            net.units.size(), " units");
    for (const Shape& g : opt.unit_grids) {
      shapes.push_back(grid_or(g, fallback, fallback.ndims()));
    }
  } else {
    shapes.assign(net.units.size(),
                  grid_or(opt.grid, fallback, fallback.ndims()));
  }
  for (size_t u = 0; u < shapes.size(); ++u) {
    require(shapes[u].ndims() < 2 || shapes[u][1] == 1,
            ErrorKind::kUnsupported, "the grid ", shapes[u], " of ",
            net.units[u].name,
            " splits channels; the examples keep channels whole (their "
            "parameters are whole on every rank)");
  }
  std::vector<Shape> made;
  for (size_t u = 0; u < shapes.size(); ++u) {
    names_.push_back(net.units[u].name);
    size_t k = 0;
    while (k < made.size() && made[k] != shapes[u]) ++k;
    if (k == made.size()) {
      made.push_back(shapes[u]);
      grids_.push_back(std::make_unique<ProcessGrid>(comm, shapes[u]));
    }
    of_unit_.push_back(grids_[k].get());
  }
}

Distribution UnitGrids::arriving(const Distribution& d, int from,
                                int to) const {
  return same(from, to) ? d
                        : Distribution(d.global_shape(), (*this)[to].shape());
}

std::string UnitGrids::describe() const {
  std::ostringstream out;
  for (size_t u = 0; u < of_unit_.size(); ++u) {
    out << (u ? ", " : "") << names_[u] << " "
        << of_unit_[u]->shape().to_string();
  }
  if (modelled_s_ > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " (planned: %.1f ms/step modelled)",
                  1e3 * modelled_s_);
    out << buf;
  }
  return out.str();
}

}  // namespace examples
}  // namespace distconv
