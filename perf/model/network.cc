#include "perf/model/network.h"

#include "distconv/error.h"

namespace distconv {
namespace model {
namespace {

bool same_except_channels(const Shape& a, const Shape& b) {
  if (a.ndims() != b.ndims()) return false;
  for (int d = 0; d < a.ndims(); ++d) {
    if (d != 1 && a[d] != b[d]) return false;
  }
  return true;
}

}  // namespace

void Network::validate() const {
  require(!units.empty(), ErrorKind::kInvalidArgument, "network '", name,
          "' has no units");
  for (size_t i = 0; i < units.size(); ++i) {
    const Unit& u = units[i];
    require(!u.ops.empty() && !u.inputs.empty(), ErrorKind::kInvalidArgument,
            "unit '", u.name, "' needs operations and inputs");
    for (size_t k = 1; k < u.ops.size(); ++k) {
      require(u.ops[k].src_shape == u.ops[k - 1].dst_shape(),
              ErrorKind::kInvalidArgument, "unit '", u.name, "': ",
              u.ops[k].describe(), " reads ", u.ops[k].src_shape, " but ",
              u.ops[k - 1].describe(), " writes ", u.ops[k - 1].dst_shape());
    }
    const Shape& want = u.ops[0].src_shape;
    Index channels = 0;
    for (int in : u.inputs) {
      require(in == kNetworkInput || (in >= 0 && static_cast<size_t>(in) < i),
              ErrorKind::kInvalidArgument, "unit '", u.name, "' reads unit ",
              in, ", not an earlier one");
      require(in != kNetworkInput || i == 0, ErrorKind::kInvalidArgument,
              "unit '", u.name, "': only the first unit reads the input");
      if (in == kNetworkInput) {
        channels += want[1];
        continue;
      }
      const Shape got = output_shape(in);
      require(same_except_channels(got, want), ErrorKind::kInvalidArgument,
              "unit '", u.name, "' reads ", want, " but unit '",
              units[in].name, "' writes ", got);
      channels += got[1];
    }
    require(channels == want[1], ErrorKind::kInvalidArgument, "unit '",
            u.name, "': its inputs have ", channels, " channels, ",
            u.ops[0].describe(), " reads ", want[1]);
  }
}

Shape Network::input_shape() const { return units.at(0).ops.at(0).src_shape; }

Shape Network::output_shape(int unit) const {
  return units.at(unit).ops.back().dst_shape();
}

Distribution with_channels(const Distribution& d, Index channels) {
  if (d.global_shape()[1] == channels) return d;
  std::vector<BlockPartition> parts;
  for (int k = 0; k < d.ndims(); ++k) {
    parts.push_back(k == 1 ? BlockPartition::balanced(channels,
                                                      d.grid_shape()[1])
                           : d.partition(k));
  }
  return Distribution(parts);
}

Distribution unit_input_distribution(const Network& net, int unit,
                                     const std::vector<Shape>& grids,
                                     const std::vector<Distribution>& outputs) {
  const Unit& u = net.units[unit];
  const Shape& shape = u.ops[0].src_shape;
  const int first = u.inputs[0];
  if (first != kNetworkInput && grids[first] == grids[unit]) {
    return with_channels(outputs[first], shape[1]);
  }
  return Distribution(shape, grids[unit]);  // balanced
}

Prediction predict(const Network& net, const std::vector<Shape>& grids,
                   const Machine& m) {
  net.validate();
  require(grids.size() == net.units.size(), ErrorKind::kInvalidArgument,
          "network '", net.name, "' has ", net.units.size(), " units, got ",
          grids.size(), " grids");
  for (const Shape& g : grids) {
    require(g.volume() == grids[0].volume(), ErrorKind::kInvalidArgument,
            "grids ", grids[0], " and ", g, " have different rank counts");
  }
  Prediction p;
  std::vector<Distribution> outputs;
  for (size_t i = 0; i < net.units.size(); ++i) {
    const Unit& u = net.units[i];
    const int unit = static_cast<int>(i);
    UnitCost uc{u.name, grids[i], {}};
    Distribution d = unit_input_distribution(net, unit, grids, outputs);
    for (int in : u.inputs) {
      if (in == kNetworkInput) continue;
      const Distribution want = with_channels(d, outputs[in].global_shape()[1]);
      uc.cost += redistribution_cost(outputs[in], want, m);
    }
    for (const Op& op : u.ops) {
      uc.cost += op_cost(op, d, m);
      d = op.dst_distribution(d);
    }
    outputs.push_back(d);
    p.total += uc.cost;
    p.units.push_back(uc);
  }
  return p;
}

Prediction predict(const Network& net, const Shape& grid, const Machine& m) {
  return predict(net, std::vector<Shape>(net.units.size(), grid), m);
}

}  // namespace model
}  // namespace distconv
