// conv_impls: every implementation of a local convolution's pass
// (kernels/conv_impl.h) timed side by side on one whole problem, on one
// thread, as the measured search times them (kernels/conv_impl_search.h:
// one warm-up, the fastest of --reps runs), over --rounds rounds, each
// round timing the candidates in list order; the views dense channels-last
// arrays, as a layer on one rank holds them. One JSON line per problem,
// pass and implementation: the kernel that runs it
// (LocalConv::implementation()), the median over the rounds of its time in
// milliseconds, and whether the heuristic (heuristic_local_conv_impl()) runs
// it. What a candidate falls back to is not timed (the search skips it
// too).
//
//   OMP_NUM_THREADS=1 conv_impls --dir=bwd_w --rounds=5 \
//       mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/error.h"
#include "distconv/halo_layout.h"
#include "kernels/conv_impl.h"
#include "kernels/conv_impl_search.h"
#include "kernels/local_conv.h"
#include "perf/cli_args.h"
#include "perf/conv_problem.h"

namespace distconv {
namespace {

struct Options {
  std::string dir = "all", dt = "f32";
  int reps = 5, rounds = 3;
  std::vector<std::string> problems;
};

const char* kUsage =
    "usage: conv_impls [--dir=fwd|bwd_d|bwd_w|all] [--dt=f32|bf16] "
    "[--reps=N] [--rounds=R] PROBLEM...\n";

const char* pass_name(ConvPass pass) {
  return pass == ConvPass::kForward        ? "fwd"
         : pass == ConvPass::kBackwardData ? "bwd_d"
                                           : "bwd_w";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename T>
void run(const Options& o, const ConvProblem& p, ConvPass pass) {
  const ConvDesc& d = p.desc;
  const Shape& x = p.src_shape;
  const Shape y = d.dst_shape(x);
  const Shape xs = dense_strides(x, StorageOrder::kChannelsLast);
  const Shape ys = dense_strides(y, StorageOrder::kChannelsLast);
  ConvImplSearchOptions search;
  search.reps = o.reps;
  std::map<ConvImpl, std::vector<double>> times;
  for (int r = 0; r < o.rounds; ++r) {
    const std::vector<ConvImplTiming> round =
        time_conv_impl_list<T>(d, x, xs, y, ys, pass, search);
    for (const ConvImplTiming& t : round) times[t.impl].push_back(t.ms);
  }
  const ConvImpl heuristic = heuristic_local_conv_impl<T>(
      d, x, xs, y, ys, pass, heuristic_conv_impl(d, pass, x, y));
  for (const auto& [impl, ms] : times) {
    const LocalConv<T> k(d, x, xs, y, ys, pass, impl);
    std::printf(
        "{\"problem\": \"%s\", \"dir\": \"%s\", \"dt\": \"%s\", \"impl\": "
        "\"%s\", \"kernel\": \"%s\", \"median_ms\": %.3f, \"heuristic\": "
        "%s}\n",
        to_string(p).c_str(), pass_name(pass), o.dt.c_str(), to_string(impl),
        k.implementation().c_str(), median(ms),
        heuristic == impl ? "true" : "false");
  }
}

int main_of(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* v = nullptr;
    if (arg == "--help") {
      std::printf(
          "%s"
          "Every implementation of a local convolution's pass timed side by "
          "side on\none whole problem in dense channels-last arrays, as the "
          "measured search\ntimes them; one JSON line per problem, pass and "
          "implementation (the\nmedian over the rounds; \"heuristic\": the "
          "one the heuristic runs).\n"
          "  --dir     the pass, or all three (default %s)\n"
          "  --dt      element type (default %s)\n"
          "  --reps    timed runs per candidate and round, the fastest kept "
          "(default %d)\n"
          "  --rounds  rounds (default %d)\n"
          "  --help    this text\n"
          "  PROBLEM   benchdnn's syntax, e.g. "
          "mb1ic16ih1024iw1024oc16oh1024ow1024kh3kw3ph1pw1\n"
          "Run with OMP_NUM_THREADS=1 for one thread.\n",
          kUsage, o.dir.c_str(), o.dt.c_str(), o.reps, o.rounds);
      return 0;
    }
    if ((v = option_value(arg, "--dir="))) {
      o.dir = v;
    } else if ((v = option_value(arg, "--dt="))) {
      o.dt = v;
    } else if ((v = option_value(arg, "--reps="))) {
      o.reps = std::max(1, std::stoi(v));
    } else if ((v = option_value(arg, "--rounds="))) {
      o.rounds = std::max(1, std::stoi(v));
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "conv_impls: unknown option %s\n%s", arg.c_str(),
                   kUsage);
      return 2;
    } else {
      o.problems.push_back(arg);
    }
  }
  const bool dir_ok = o.dir == "all" || o.dir == "fwd" || o.dir == "bwd_d" ||
                      o.dir == "bwd_w";
  if (!dir_ok || (o.dt != "f32" && o.dt != "bf16") || o.problems.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  for (const std::string& text : o.problems) {
    const ConvProblem p = parse_conv_problem(text);
    for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData,
                          ConvPass::kBackwardWeights}) {
      if (o.dir != "all" && o.dir != pass_name(pass)) continue;
      if (o.dt == "bf16") {
        run<bf16>(o, p, pass);
      } else {
        run<float>(o, p, pass);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace distconv

int main(int argc, char** argv) {
  try {
    return distconv::main_of(argc, argv);
  } catch (const std::exception& e) {  // distconv::Error; a bad number
    std::fprintf(stderr, "conv_impls: %s\n", e.what());
    return 1;
  }
}
