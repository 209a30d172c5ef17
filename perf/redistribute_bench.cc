// Redistribution benchmark: moves one tensor from one grid to another
// (Redistribution<T>::forward) and, in the same run, times a plain
// MPI_Alltoallv moving the same byte counts between the same ranks from and
// into contiguous buffers, with no packing: the lower bound of the move
// (total bytes / all-to-all bandwidth measured here).
//
//   mpirun -np 2 redistribute_bench --shape=1x16x2048x2048
//       --from=1x1x2x1 --to=2x1x1x1 --reps=10 --dt=f32 [--json]
//
// Each repetition times both, interleaved, with the ranks aligned by a
// barrier; a repetition's time is the slowest rank's. Prints the median and
// minimum over --reps of each, the bytes each rank sends to other ranks
// (elements kept on a rank are copied locally and not counted), and the
// ratio redistribution time / all-to-all time (1.0: as fast as the bound),
// and the time of a memcpy of the bytes that stay on each rank (the move
// copies them locally; the bound leaves them out).
// The first move is checked element by element before timing.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"
#include "layers/redistribute.h"
#include "perf/cli_args.h"
#include "perf/rank_timing.h"

namespace distconv {
namespace {

struct Options {
  Shape shape{1, 16, 2048, 2048};
  Shape from{1, 1, 2, 1};
  Shape to{2, 1, 1, 1};
  int reps = 10;
  bool f64 = false;
  bool json = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* v = option_value(a, "--shape=")) {
      o.shape = parse_dims(v);
    } else if (const char* v = option_value(a, "--from=")) {
      o.from = parse_dims(v);
    } else if (const char* v = option_value(a, "--to=")) {
      o.to = parse_dims(v);
    } else if (const char* v = option_value(a, "--reps=")) {
      o.reps = std::stoi(v);
    } else if (const char* v = option_value(a, "--dt=")) {
      require(a == "--dt=f32" || a == "--dt=f64", ErrorKind::kInvalidArgument,
              "--dt must be f32 or f64, got ", v);
      o.f64 = a == "--dt=f64";
    } else if (a == "--json") {
      o.json = true;
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a);
    }
  }
  require(o.reps >= 1, ErrorKind::kInvalidArgument, "--reps must be >= 1");
  require(o.from.ndims() == o.shape.ndims() && o.to.ndims() == o.shape.ndims(),
          ErrorKind::kInvalidArgument, "--from=", o.from, " and --to=", o.to,
          " need one extent per dimension of --shape=", o.shape);
  return o;
}

struct Stats {
  double median = 0, min = 0;
};

Stats stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

// A value per global index, exact in float: where the element came from.
float tag_of(const Shape& global_index) {
  return static_cast<float>(global_index[global_index.ndims() - 1] % 4096 +
                            4096 * (global_index[0] % 64));
}

// Counts and displacements of the plan's messages, one entry per rank.
struct AllToAll {
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
};

AllToAll counts_of(const RedistributionPlan& plan, int ranks) {
  AllToAll a;
  a.send_counts.assign(ranks, 0);
  a.recv_counts.assign(ranks, 0);
  for (const RedistributionMessage& m : plan.sends) {
    a.send_counts[m.peer] = static_cast<int>(m.box.volume());
  }
  for (const RedistributionMessage& m : plan.recvs) {
    a.recv_counts[m.peer] = static_cast<int>(m.box.volume());
  }
  for (const auto& [counts, displs] :
       {std::make_pair(&a.send_counts, &a.send_displs),
        std::make_pair(&a.recv_counts, &a.recv_displs)}) {
    long long total = 0;
    for (int c : *counts) {
      require(total <= INT_MAX, ErrorKind::kUnsupported,
              "MPI_Alltoallv displacements exceed INT_MAX elements");
      displs->push_back(static_cast<int>(total));
      total += c;
    }
  }
  return a;
}

template <typename T>
void run(const Options& o) {
  ProcessGrid src_grid(MPI_COMM_WORLD, o.from);
  ProcessGrid dst_grid(MPI_COMM_WORLD, o.to);
  const HaloLayout from(Distribution(o.shape, o.from));
  const HaloLayout to(Distribution(o.shape, o.to));
  Redistribution<T> shuffle(src_grid, from, dst_grid, to);
  DistTensor<T> x(src_grid, from), y(dst_grid, to);
  const Shape src_lower = x.shard().lower, dst_lower = y.shard().lower;
  x.interior().for_each(
      [&](const Shape& i, T& v) { v = tag_of(i + src_lower); });
  shuffle.forward(x, y);
  long long wrong = 0, wrong_anywhere = 0;
  y.interior().for_each([&](const Shape& i, const T& v) {
    if (v != tag_of(i + dst_lower)) ++wrong;
  });
  MPI_Allreduce(&wrong, &wrong_anywhere, 1, MPI_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  require(wrong_anywhere == 0, ErrorKind::kState, "the redistribution put ",
          wrong_anywhere, " elements in the wrong place");

  const RedistributionPlan& plan = shuffle.plan();
  const AllToAll a = counts_of(plan, src_grid.size());
  std::vector<T> out(plan.send_volume(), T(1)), in(plan.recv_volume());
  const MPI_Datatype type = internal::mpi_datatype<T>();
  auto alltoallv = [&] {
    MPI_Alltoallv(out.data(), a.send_counts.data(), a.send_displs.data(), type,
                  in.data(), a.recv_counts.data(), a.recv_displs.data(), type,
                  src_grid.comm());
  };
  alltoallv();  // warm up
  // What stays on a rank is copied, not sent: a plain memcpy of as many
  // bytes shows that part of the move's time.
  std::vector<T> kept_from(plan.kept.volume(), T(1)),
      kept_to(plan.kept.volume());
  auto copy_kept = [&] {
    std::memcpy(kept_to.data(), kept_from.data(), sizeof(T) * kept_to.size());
  };
  copy_kept();
  std::vector<double> t_move, t_bound, t_copy;
  for (int r = 0; r < o.reps; ++r) {
    t_bound.push_back(slowest_rank_seconds(src_grid.comm(), alltoallv));
    t_copy.push_back(slowest_rank_seconds(src_grid.comm(), copy_kept));
    t_move.push_back(slowest_rank_seconds(src_grid.comm(), [&] { shuffle.forward(x, y); }));
  }
  const Stats move = stats(t_move), bound = stats(t_bound);
  const Stats copy = stats(t_copy);
  long long sent = static_cast<long long>(sizeof(T)) * plan.send_volume();
  long long kept = static_cast<long long>(sizeof(T)) * plan.kept.volume();
  long long most = 0, total = 0, kept_total = 0;
  MPI_Allreduce(&sent, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&sent, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&kept, &kept_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (src_grid.rank() != 0) return;
  const char* dt = o.f64 ? "f64" : "f32";
  if (o.json) {
    std::printf(
        "{\"shape\": \"%s\", \"from\": \"%s\", \"to\": \"%s\", \"dt\": "
        "\"%s\", \"ranks\": %d, \"reps\": %d, \"bytes_sent_max\": %lld, "
        "\"bytes_sent_total\": %lld, \"bytes_kept_total\": %lld, "
        "\"redistribute_median_ms\": %.4f, \"redistribute_min_ms\": %.4f, "
        "\"alltoallv_median_ms\": %.4f, \"alltoallv_min_ms\": %.4f, "
        "\"memcpy_kept_median_ms\": %.4f, "
        "\"ratio_median\": %.3f, \"ratio_min\": %.3f}\n",
        o.shape.to_string().c_str(), o.from.to_string().c_str(),
        o.to.to_string().c_str(), dt, src_grid.size(), o.reps, most, total,
        kept_total, move.median * 1e3, move.min * 1e3, bound.median * 1e3,
        bound.min * 1e3, copy.median * 1e3, move.median / bound.median,
        move.min / bound.min);
    return;
  }
  std::printf("shape=%s %s from=%s to=%s ranks=%d reps=%d\n",
              o.shape.to_string().c_str(), dt, o.from.to_string().c_str(),
              o.to.to_string().c_str(), src_grid.size(), o.reps);
  std::printf(
      "  bytes sent to other ranks: %.1f MiB max per rank, %.1f MiB "
      "in all; %.1f MiB kept in place\n",
      most / 1048576.0, total / 1048576.0, kept_total / 1048576.0);
  auto row = [&](const char* name, const Stats& s) {
    std::printf(
        "  %-13s median %9.3f ms  min %9.3f ms  %7.2f GB/s (all "
        "bytes sent / median)\n",
        name, s.median * 1e3, s.min * 1e3, total / s.median / 1e9);
  };
  row("alltoallv", bound);
  row("redistribute", move);
  std::printf("  memcpy of the kept bytes (not in the bound): median %.3f ms\n",
              copy.median * 1e3);
  std::printf("  ratio redistribute / alltoallv: median %.2f, min %.2f\n",
              move.median / bound.median, move.min / bound.min);
}

}  // namespace
}  // namespace distconv

// --help's text.
constexpr const char* kUsage =
    "usage: mpirun -np P redistribute_bench [options]\n"
    "A redistribution between two grids against MPI_Alltoallv of the same bytes.\n"
    "  --shape=NxCxHxW  the tensor (default 1x16x2048x2048)\n"
    "  --from=NxCxHxW   the source grid (default 1x1x2x1)\n"
    "  --to=NxCxHxW     the destination grid (default 2x1x1x1)\n"
    "  --reps=R         timed repetitions (default 10)\n"
    "  --dt=f32|f64     element type (default f32)\n"
    "  --json           one JSON line per run\n"
    "  --help           this text\n";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (distconv::help_printed(argc, argv, kUsage)) {
    MPI_Finalize();
    return 0;
  }
  int status = 0;
  try {
    const distconv::Options o = distconv::parse(argc, argv);
    if (o.f64) {
      distconv::run<double>(o);
    } else {
      distconv::run<float>(o);
    }
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
