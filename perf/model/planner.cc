#include "perf/model/planner.h"

#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "distconv/error.h"

namespace distconv {
namespace model {
namespace {

// Every way to write `ranks` as a product over N, the spatial dimensions
// and (with kWhereSupported) the channels of `tensor`, each factor at
// most its dimension's extent when `capped`.
void factorise(const Shape& tensor, int dim, Index left, bool capped,
               ChannelSplits channels, Shape& grid, std::vector<Shape>& out) {
  if (dim == tensor.ndims()) {
    if (left == 1) out.push_back(grid);
    return;
  }
  if (dim == 1 && channels == ChannelSplits::kNone) {
    grid[1] = 1;
    factorise(tensor, 2, left, capped, channels, grid, out);
    return;
  }
  // Samples from the most parts down, so that on a tie (halos hidden
  // behind compute, say) the search keeps the split without halos;
  // channel parts from 1 up, so that a tie keeps channels whole.
  for (Index k = 1; k <= left; ++k) {
    const Index f = dim == 0 ? left + 1 - k : k;
    if (left % f != 0 || (capped && f > tensor[dim])) continue;
    grid[dim] = f;
    factorise(tensor, dim + 1, left / f, capped, channels, grid, out);
  }
}

// Whether every operation of `u` runs on grids splitting channels: a
// convolution of one group, ReLU, pooling. Batch norm runs on them too,
// but units holding it are kept off them: the training examples that run
// these plans keep the parameters whole on every rank.
bool splits_channels(const Unit& u) {
  for (const Op& op : u.ops) {
    const bool ok = (op.kind == OpKind::kConvolution && op.conv.groups == 1) ||
                    op.kind == OpKind::kRelu || op.kind == OpKind::kPooling;
    if (!ok) return false;
  }
  return true;
}

// The dynamic program's memo of one unit's candidates: cost and output
// distribution on each, its input taken balanced.
struct UnitTable {
  std::vector<Shape> grids;
  std::vector<std::optional<std::pair<double, Distribution>>> memo;
};

class Search {
 public:
  Search(const Network& net, int ranks, ChannelSplits channels,
         const Machine& m)
      : net_(net), m_(m), n_(static_cast<int>(net.units.size())) {
    for (const Unit& u : net.units) {
      UnitTable t;
      t.grids = unit_candidates(u, ranks, channels);
      t.memo.resize(t.grids.size());
      tables_.push_back(std::move(t));
    }
    // last_reader_[j]: the last unit reading unit j's output.
    last_reader_.assign(n_, -1);
    for (int i = 0; i < n_; ++i) {
      for (int in : net.units[i].inputs) {
        if (in != kNetworkInput) last_reader_[in] = i;
      }
    }
  }

  std::vector<Shape> run() {
    // State: the candidate indices of the live units (in unit order).
    struct Entry {
      double cost;
      std::vector<int> prev;
      int choice;
    };
    using Table = std::map<std::vector<int>, Entry>;
    std::vector<Table> steps(n_);  // steps[i]: the states after unit i
    const Table start = {{{}, {0.0, {}, -1}}};
    const Table* current = &start;
    std::vector<int> live;  // units live before unit i
    for (int i = 0; i < n_; ++i) {
      std::vector<int> next_live;
      for (int j : live) {
        if (last_reader_[j] > i) next_live.push_back(j);
      }
      if (last_reader_[i] > i) next_live.push_back(i);
      Table& next = steps[i];
      for (const auto& [key, entry] : *current) {
        for (size_t g = 0; g < tables_[i].grids.size(); ++g) {
          const double cost =
              entry.cost + step_cost(i, static_cast<int>(g), live, key);
          std::vector<int> k2;
          for (int j : next_live) {
            k2.push_back(j == i ? static_cast<int>(g)
                                : key[index_of(live, j)]);
          }
          auto it = next.find(k2);
          if (it == next.end() || cost < it->second.cost) {
            next[k2] = {cost, key, static_cast<int>(g)};
          }
        }
      }
      current = &next;
      live = next_live;
    }
    // Walk back from the cheapest final state.
    std::vector<int> key;
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [k, e] : *current) {
      if (e.cost < best) {
        best = e.cost;
        key = k;
      }
    }
    std::vector<Shape> grids(n_);
    for (int i = n_ - 1; i >= 0; --i) {
      const Entry& e = steps[i].at(key);
      grids[i] = tables_[i].grids[e.choice];
      key = e.prev;
    }
    return grids;
  }

 private:
  static size_t index_of(const std::vector<int>& v, int x) {
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] == x) return k;
    }
    throw Error(ErrorKind::kInvalidArgument, "planner: unit not live");
  }

  const std::pair<double, Distribution>& unit(int i, int g) {
    auto& slot = tables_[i].memo[g];
    if (!slot) {
      const Unit& u = net_.units[i];
      Distribution d(u.ops[0].src_shape, tables_[i].grids[g]);  // balanced
      double cost = 0;
      for (const Op& op : u.ops) {
        cost += op_cost(op, d, m_).total();
        d = op.dst_distribution(d);
      }
      slot.emplace(cost, d);
    }
    return *slot;
  }

  // Unit i on its candidate g, its inputs' grids in `key` (over `live`):
  // its operations plus moving its inputs.
  double step_cost(int i, int g, const std::vector<int>& live,
                   const std::vector<int>& key) {
    const Unit& u = net_.units[i];
    const Shape& grid = tables_[i].grids[g];
    double cost = unit(i, g).first;
    std::optional<Distribution> target;
    for (int in : u.inputs) {
      if (in == kNetworkInput) continue;
      const int gi = key[index_of(live, in)];
      const Distribution& out = unit(in, gi).second;
      if (!target) {  // the first input sets the unit's distribution
        target = tables_[in].grids[gi] == grid
                     ? with_channels(out, u.ops[0].src_shape[1])
                     : Distribution(u.ops[0].src_shape, grid);
      }
      cost += redistribution_cost(out, with_channels(*target,
                                                     out.global_shape()[1]),
                                  m_)
                  .total();
    }
    return cost;
  }

  const Network& net_;
  const Machine& m_;
  int n_;
  std::vector<UnitTable> tables_;
  std::vector<int> last_reader_;
};

}  // namespace

std::vector<Shape> candidate_grids(const Shape& tensor, int ranks,
                                   ChannelSplits channels) {
  require(ranks >= 1, ErrorKind::kInvalidArgument, "ranks must be >= 1, got ",
          ranks);
  require(tensor.ndims() >= 3, ErrorKind::kInvalidArgument,
          "a tensor N x C x spatial, not ", tensor);
  std::vector<Shape> out;
  Shape grid = Shape::filled(tensor.ndims(), 1);
  factorise(tensor, 0, ranks, /*capped=*/true, channels, grid, out);
  if (out.empty()) {
    factorise(tensor, 0, ranks, /*capped=*/false, channels, grid, out);
  }
  return out;
}

std::vector<Shape> unit_candidates(const Unit& u, int ranks,
                                   ChannelSplits channels) {
  return candidate_grids(
      u.ops[0].src_shape, ranks,
      splits_channels(u) ? channels : ChannelSplits::kNone);
}

Plan plan_network(const Network& net, const PlannerOptions& options,
                  const Machine& m) {
  net.validate();
  require(options.ranks >= 1, ErrorKind::kInvalidArgument,
          "ranks must be >= 1, got ", options.ranks);
  Plan plan;
  if (options.scope == PlanScope::kOneGrid) {
    double best = std::numeric_limits<double>::infinity();
    for (const Shape& g : candidate_grids(net.input_shape(), options.ranks)) {
      Prediction p = predict(net, g, m);
      if (p.step_s() < best) {
        best = p.step_s();
        plan.grids.assign(net.units.size(), g);
        plan.prediction = p;
      }
    }
    return plan;
  }
  plan.grids = Search(net, options.ranks, options.channels, m).run();
  plan.prediction = predict(net, plan.grids, m);
  // The search costs inputs as balanced; where uneven splits make the
  // exact prediction of its answer worse than that of the best single
  // grid, the single grid is the plan.
  PlannerOptions one = options;
  one.scope = PlanScope::kOneGrid;
  Plan uniform = plan_network(net, one, m);
  return uniform.prediction.step_s() < plan.prediction.step_s() ? uniform
                                                                 : plan;
}

}  // namespace model
}  // namespace distconv
