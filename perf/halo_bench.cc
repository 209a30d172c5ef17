// Halo exchange benchmark: the forward exchange of one tensor split over a
// grid of ranks, against a plain memcpy of the same number of bytes on each
// rank, measured side by side in the same run.
//
//   mpirun -np 2 halo_bench --shape=8,64,512,512 --grid=1,1,2,1 --width=1
//
// Prints, for memcpy and each halo transport, the median over --reps runs of
// the slowest rank's time (averaged over 3 interleaved rounds) and the ratio
// memcpy time / exchange time: 1.0 means the exchange moves halo bytes as
// fast as memcpy copies them within one process.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "halo/halo_exchange.h"
#include "halo/halo_plan.h"
#include "perf/cli_args.h"
#include "perf/rank_timing.h"

namespace distconv {
namespace {

struct Options {
  Shape shape{8, 64, 512, 512};
  Shape grid{1, 1, 2, 1};
  Index width = 1;
  int reps = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (const char* v = option_value(a, "--shape=")) {
      o.shape = parse_dims(v);
    } else if (const char* v = option_value(a, "--grid=")) {
      o.grid = parse_dims(v);
    } else if (const char* v = option_value(a, "--width=")) {
      o.width = std::stoll(v);
    } else if (const char* v = option_value(a, "--reps=")) {
      o.reps = std::stoi(v);
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a);
    }
  }
  return o;
}

// Median over reps of the slowest rank's time of fn().
template <typename Fn>
double median_time(MPI_Comm comm, int reps, Fn fn) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    times.push_back(slowest_rank_seconds(comm, fn));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void run(const Options& o) {
  ProcessGrid grid(MPI_COMM_WORLD, o.grid);
  HaloWidths widths = HaloWidths::none(o.shape.ndims());
  for (int d = 2; d < o.shape.ndims(); ++d) {
    if (o.grid[d] > 1) widths.lower[d] = widths.upper[d] = o.width;
  }
  const HaloLayout layout(Distribution(o.shape, o.grid), widths);
  DistTensor<float> x(grid, layout);
  x.interior().for_each([](const Shape& i, float& v) { v = float(i[3]); });
  struct Variant {
    const char* name;
    HaloExchange<float> exchange;
    double seconds = 0;
  };
  std::vector<Variant> variants;
  variants.push_back({"shared", {grid, layout, {HaloTransport::kSharedMemory}}});
  variants.push_back({"packed", {grid, layout, {HaloTransport::kPackedBuffers}}});
  variants.push_back({"datatypes", {grid, layout, {HaloTransport::kMpiDatatypes}}});
  const HaloPlan& plan = variants[0].exchange.plan();
  const Index cells = plan.recv_volume();
  const size_t bytes = sizeof(float) * cells;
  // The memcpy baseline copies as many bytes as this rank receives.
  std::vector<float> src(cells, 1.0f), dst(cells, 0.0f);
  // MPI's own floor: the plan's messages as contiguous buffers, no packing.
  std::vector<float> out(plan.send_volume(), 1.0f);
  auto raw_mpi = [&] {
    std::vector<MPI_Request> requests;
    float* in = dst.data();
    for (const HaloMessage& m : plan.recvs) {
      requests.emplace_back();
      MPI_Irecv(in, static_cast<int>(m.local.volume()), MPI_FLOAT, m.peer,
                m.tag, grid.comm(), &requests.back());
      in += m.local.volume();
    }
    const float* o = out.data();
    for (const HaloMessage& m : plan.sends) {
      requests.emplace_back();
      MPI_Isend(o, static_cast<int>(m.local.volume()), MPI_FLOAT, m.peer,
                m.tag, grid.comm(), &requests.back());
      o += m.local.volume();
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                MPI_STATUSES_IGNORE);
  };
  double t_mpi = 0;
  std::memcpy(dst.data(), src.data(), bytes);
  for (Variant& v : variants) v.exchange.exchange(x);  // warm up
  // Interleaved rounds, so that a noisy moment hits every variant alike.
  double t_copy = 0;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    t_copy += median_time(grid.comm(), o.reps, [&] {
      std::memcpy(dst.data(), src.data(), bytes);
    }) / kRounds;
    t_mpi += median_time(grid.comm(), o.reps, raw_mpi) / kRounds;
    for (Variant& v : variants) {
      v.seconds += median_time(grid.comm(), o.reps,
                               [&] { v.exchange.exchange(x); }) / kRounds;
    }
  }
  long long mine = static_cast<long long>(bytes), most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, grid.comm());
  if (grid.rank() != 0) return;
  std::printf("shape=%s grid=%s width=%lld halo_bytes_per_rank=%lld\n",
              o.shape.to_string().c_str(), o.grid.to_string().c_str(),
              static_cast<long long>(o.width), most);
  std::printf("  %-10s %8.3f ms %7.2f GB/s\n", "memcpy", t_copy * 1e3,
              most / t_copy / 1e9);
  auto row = [&](const char* name, double seconds) {
    std::printf("  %-10s %8.3f ms %7.2f GB/s  ratio to memcpy %.2f\n", name,
                seconds * 1e3, most / seconds / 1e9, t_copy / seconds);
  };
  row("raw-mpi", t_mpi);
  for (const Variant& v : variants) row(v.name, v.seconds);
}

}  // namespace
}  // namespace distconv

// --help's text.
constexpr const char* kUsage =
    "usage: mpirun -np P halo_bench [options]\n"
    "The forward halo exchange of one tensor against a memcpy of as many bytes.\n"
    "  --shape=NxCxHxW  the tensor (default 8x64x512x512)\n"
    "  --grid=NxCxHxW   the process grid (default 1x1x2x1)\n"
    "  --width=K        halo width in every split spatial dimension (default 1)\n"
    "  --reps=R         timed repetitions (default 20)\n"
    "  --help           this text\n";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (distconv::help_printed(argc, argv, kUsage)) {
    MPI_Finalize();
    return 0;
  }
  int status = 0;
  try {
    distconv::run(distconv::parse(argc, argv));
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
