// The performance model's prediction for a training example's network or
// one convolution layer, on given grids or the planner's:
//
//   predict --machine=FILE --network=segmentation|cosmoflow [its options]
//           (--grid=G | --grids=G1,G2,... | --grid=auto --ranks=P)
//   predict --machine=FILE --conv=DESCRIPTOR --grid=G    (one layer, its
//           three passes, as distconv_bench --conv times them; on a grid
//           splitting channels, --channels=SCHEME --channel-blocks=K as
//           distconv_bench takes them)
//   predict ... --sweep=1,4,16 [--weak]
//
// The network options are the example's own (--samples=, --size=, ...;
// examples/networks.h), so a prediction describes exactly the run it
// predicts. It prints each unit's modelled time split into compute, halo
// exchange, allreduce and redistribution (exposed parts only) and a line
//   result {"ms_per_step": 12.3}
// for scripts. --sweep plans every rank count of the list (strong
// scaling; with --weak the samples grow with the ranks) and prints, per
// count, the planner's per-unit grids, the best single grid and pure
// sample parallelism where there are enough samples.
#include <cstdio>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "examples/networks.h"
#include "examples/training.h"
#include "perf/cli_args.h"
#include "perf/conv_problem.h"
#include "perf/model/machine.h"
#include "perf/model/network.h"
#include "perf/model/planner.h"

namespace distconv {
namespace model {
namespace {

using examples::CosmoflowShape;
using examples::GridMode;
using examples::IntegerOption;
using examples::SegmentationShape;
using examples::TrainOptions;

struct Options {
  std::string network;  // segmentation, cosmoflow, or conv
  std::string conv;     // --conv's descriptor
  ConvolutionOptions conv_options;  // --channels=, --channel-blocks=
  SegmentationShape segmentation;
  CosmoflowShape cosmoflow;
  TrainOptions grids;  // --grid=, --grids=, --machine=
  Index ranks = 0;
  std::vector<Index> sweep;
  bool weak = false;
};

Options parse(int argc, char** argv) {
  Options o;
  o.grids.machine_path = "";
  // predict's own options here; the grid and network options (and
  // anything unknown) go to the examples' parse_args.
  std::vector<char*> rest = {argv[0]};
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (const char* v = option_value(arg, "--network=")) {
      o.network = v;
    } else if (const char* v = option_value(arg, "--conv=")) {
      o.network = "conv";
      o.conv = v;
    } else if (const char* v = option_value(arg, "--channels=")) {
      o.conv_options.channels = channel_parallelism_named(v, "--channels");
    } else if (const char* v = option_value(arg, "--channel-blocks=")) {
      o.conv_options.channel_blocks =
          static_cast<int>(examples::positive_integer(arg, v));
    } else if (const char* v = option_value(arg, "--sweep=")) {
      for (const std::string& p : comma_items(v)) {
        o.sweep.push_back(examples::positive_integer(arg, p.c_str()));
      }
    } else if (arg == "--weak") {
      o.weak = true;
    } else {
      rest.push_back(argv[a]);
    }
  }
  std::vector<IntegerOption> own = {{"--ranks=", &o.ranks}};
  if (o.network == "segmentation") {
    for (const IntegerOption& i : o.segmentation.options()) own.push_back(i);
  } else if (o.network == "cosmoflow") {
    for (const IntegerOption& i : o.cosmoflow.options()) own.push_back(i);
  }
  examples::parse_args(static_cast<int>(rest.size()), rest.data(), &o.grids,
                       own);
  require(o.network == "segmentation" || o.network == "cosmoflow" ||
              o.network == "conv",
          ErrorKind::kInvalidArgument,
          "give --network=segmentation, --network=cosmoflow or --conv=...");
  require(!o.grids.machine_path.empty(), ErrorKind::kInvalidArgument,
          "give --machine=FILE (perf/machines/)");
  return o;
}

Network network(const Options& o, Index samples_scale) {
  if (o.network == "segmentation") {
    SegmentationShape s = o.segmentation;
    s.check();
    s.samples *= samples_scale;
    return examples::segmentation_network(s);
  }
  if (o.network == "cosmoflow") {
    CosmoflowShape s = o.cosmoflow;
    s.check();
    s.samples *= samples_scale;
    return examples::cosmoflow_network(s);
  }
  ConvProblem p = parse_conv_problem(o.conv);
  p.src_shape[0] *= samples_scale;
  Network net;
  net.name = "conv";
  net.units.push_back({"conv",
                       {Op::convolution(p.desc, p.src_shape, o.conv_options)},
                       {kNetworkInput}});
  return net;
}

void print_prediction(const Prediction& p) {
  std::printf("%-10s %-12s %10s %10s %10s %10s %10s %10s\n", "unit", "grid",
              "compute", "halo", "channels", "allreduce", "redistrib",
              "total ms");
  auto row = [](const std::string& name, const std::string& grid,
                const Cost& c) {
    std::printf("%-10s %-12s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                name.c_str(), grid.c_str(), 1e3 * c.compute_s, 1e3 * c.halo_s,
                1e3 * c.channel_s, 1e3 * c.allreduce_s,
                1e3 * c.redistribute_s, 1e3 * c.total());
  };
  for (const UnitCost& u : p.units) row(u.name, u.grid.to_string(), u.cost);
  row("step", "", p.total);
  std::printf("result {\"ms_per_step\": %.4f, \"compute_ms\": %.4f, "
              "\"halo_ms\": %.4f, \"channel_ms\": %.4f, "
              "\"allreduce_ms\": %.4f, \"redistribute_ms\": %.4f}\n",
              1e3 * p.step_s(), 1e3 * p.total.compute_s, 1e3 * p.total.halo_s,
              1e3 * p.total.channel_s, 1e3 * p.total.allreduce_s,
              1e3 * p.total.redistribute_s);
}

std::string grid_list(const std::vector<Shape>& grids) {
  std::string s;
  for (size_t i = 0; i < grids.size(); ++i) {
    s += (i ? "," : "") + grids[i].to_string();
  }
  return s;
}

void sweep(const Options& o, const Machine& m) {
  std::printf("%6s %12s %12s %12s  %s\n", "ranks", "planned ms", "1-grid ms",
              "samples ms", "planned grids (one best grid)");
  for (Index p : o.sweep) {
    const Network net = network(o, o.weak ? p : 1);
    PlannerOptions po;
    po.ranks = static_cast<int>(p);
    const Plan plan = plan_network(net, po, m);
    po.scope = PlanScope::kOneGrid;
    const Plan one = plan_network(net, po, m);
    const Shape x = net.input_shape();
    std::string samples = "-";
    if (x[0] >= p) {
      Shape g = Shape::filled(x.ndims(), 1);
      g[0] = p;
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", 1e3 * predict(net, g, m).step_s());
      samples = buf;
    }
    std::printf("%6lld %12.3f %12.3f %12s  %s (%s)\n",
                static_cast<long long>(p), 1e3 * plan.prediction.step_s(),
                1e3 * one.prediction.step_s(), samples.c_str(),
                grid_list(plan.grids).c_str(),
                one.grids[0].to_string().c_str());
  }
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const Machine m = load_machine(o.grids.machine_path);
  std::printf("machine: %s\n", m.name.c_str());
  if (!o.sweep.empty()) {
    sweep(o, m);
    return 0;
  }
  const Network net = network(o, 1);
  std::vector<Shape> grids;
  switch (o.grids.grid_mode) {
    case GridMode::kAuto: {
      require(o.ranks >= 1, ErrorKind::kInvalidArgument,
              "--grid=auto needs --ranks=P");
      PlannerOptions po;
      po.ranks = static_cast<int>(o.ranks);
      grids = plan_network(net, po, m).grids;
      break;
    }
    case GridMode::kPerUnit:
      grids = o.grids.unit_grids;
      break;
    case GridMode::kGiven:
      require(o.grids.grid.ndims() > 0, ErrorKind::kInvalidArgument,
              "give --grid=G, --grids=G1,G2,... or --grid=auto --ranks=P");
      grids.assign(net.units.size(), o.grids.grid);
      break;
  }
  for (const Shape& g : grids) {
    require(g.ndims() == net.input_shape().ndims(),
            ErrorKind::kInvalidArgument, "grid ", g, " for a ",
            net.input_shape().ndims(), "-dimensional network");
  }
  print_prediction(predict(net, grids, m));
  return 0;
}

}  // namespace
}  // namespace model
}  // namespace distconv

int main(int argc, char** argv) {
  try {
    return distconv::model::run(argc, argv);
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "predict: %s\n", e.what());
    return 2;
  }
}
