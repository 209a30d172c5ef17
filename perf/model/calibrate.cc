// Measures the performance model's machine constants on this machine and
// writes them in machine.h's format:
//
//   mpirun -np 2 -x OMP_NUM_THREADS=1 bazel-bin/perf/model/calibrate
//       [--out=FILE] [--reps=3]
//
// Rank 0 times, on a grid of its own (MPI_COMM_SELF) while the others
// wait: each convolution pass at C = F = 4, 16 and 64 (2D on 1 x C x 256 x
// 256, 3D on 1 x C x 32^3), and batch norm, ReLU, 2x2 max pooling,
// concatenation, the cross-entropy loss and a shard copy per element
// (forward and backward), each the median of --reps runs after a warm-up.
// The call overhead is a convolution on 1 x 4 x 4 x 4. The contention is
// how much slower the C = F = 16 convolutions (2D and 3D) run when every
// core has a rank running them at once than on rank 0 alone (the slowest
// rank's time). Ranks 0 and 1 then ping-pong 8-byte messages (latency: half a round trip) and 4 MiB
// ones (bandwidth). Everything runs on one node here, so the file puts
// every rank on one node (ranks_per_node 4096) and its cores_per_node is
// this machine's core count. About 10 s.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "layers/activation.h"
#include "layers/batch_norm.h"
#include "layers/concat.h"
#include "layers/convolution.h"
#include "layers/copy_shard.h"
#include "distconv/error.h"
#include "layers/loss.h"
#include "layers/pooling.h"
#include "perf/cli_args.h"
#include "perf/model/machine.h"

namespace distconv {
namespace model {
namespace {

struct Options {
  std::string out;  // empty: stdout
  int reps = 3;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (const char* v = option_value(arg, "--out=")) {
      o.out = v;
    } else if (const char* v = option_value(arg, "--reps=")) {
      const Shape s = parse_dims(v);
      require(s.ndims() == 1 && s[0] >= 1 && s[0] <= 100,
              ErrorKind::kInvalidArgument, arg, ": expected 1 to 100");
      o.reps = static_cast<int>(s[0]);
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + arg +
                                                   " (--out=FILE, --reps=N)");
    }
  }
  return o;
}

// The median of `reps` timed calls of fn after one untimed call.
double median_s(int reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double start = MPI_Wtime();
    fn();
    t.push_back(MPI_Wtime() - start);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void fill(DistTensor<float>& t, float v) {
  t.interior().for_each([&](const Shape&, float& x) { x = v; });
}

HaloLayout plain(const Distribution& d) {
  return HaloLayout(d).with_storage(StorageOrder::kChannelsLast);
}

// Seconds of the three passes of a same-padded 3x3(x3) convolution.
std::array<double, 3> conv_passes(const ProcessGrid& grid, const Shape& x,
                                  int reps) {
  const int sd = x.ndims() - 2;
  ConvDesc d = ConvDesc::make(x[1], x[1], Shape::filled(sd, 3));
  d.padding_lower = d.padding_upper = Shape::filled(sd, 1);
  Convolution<float> conv(grid, d, Distribution(x, Shape::filled(x.ndims(), 1)));
  DistTensor<float> src(grid, conv.src_layout()), dst(grid, conv.dst_layout()),
      dy(grid, conv.diff_dst_layout()), dx(grid, conv.diff_src_layout());
  fill(src, 0.5f);
  fill(dy, 0.25f);
  std::vector<float> w(d.weights_shape().volume(), 0.01f), dw(w.size());
  return {median_s(reps, [&] { conv.forward(src, w.data(), nullptr, dst); }),
          median_s(reps, [&] { conv.backward_data(dy, w.data(), dx); }),
          median_s(reps, [&] {
            conv.backward_weights(src, dy, dw.data(), nullptr);
            conv.wait_gradients();
          })};
}

// Per-element seconds of the memory-bound operations on `x`.
void elementwise(const ProcessGrid& grid, const Shape& x, int reps,
                 Machine& m) {
  const Distribution dist(x, Shape::filled(x.ndims(), 1));
  const double n = static_cast<double>(x.volume());
  DistTensor<float> a(grid, plain(dist)), b(grid, plain(dist)),
      c(grid, plain(dist)), d(grid, plain(dist));
  fill(a, 0.5f);
  fill(b, 0.25f);
  {
    BatchNorm<float> bn(grid, dist);
    std::vector<float> scale(x[1], 1.0f), shift(x[1], 0.0f), ds(x[1]),
        dh(x[1]);
    m.batch_norm_s = median_s(reps, [&] {
                       bn.forward(a, scale.data(), shift.data(), c);
                       bn.backward(a, b, scale.data(), d, ds.data(), dh.data());
                     }) / n;
  }
  {
    Activation<float> relu(grid, ActivationDesc::relu(), dist);
    m.relu_s = median_s(reps, [&] {
                 relu.forward(a, c);
                 relu.backward(a, b, d);
               }) / n;
  }
  {
    Pooling<float> pool(grid, PoolDesc::make(PoolKind::kMax, Shape::filled(
                                                               x.ndims() - 2, 2)),
                        dist);
    DistTensor<float> in(grid, pool.src_layout()), out(grid, pool.dst_layout()),
        dout(grid, pool.diff_dst_layout()), din(grid, pool.diff_src_layout());
    fill(in, 0.5f);
    fill(dout, 0.25f);
    m.pool_s = median_s(reps, [&] {
                 pool.forward(in, out);
                 pool.backward(in, dout, din);
               }) / n;
  }
  {
    Shape half = x;
    half[1] = x[1] / 2;
    const Distribution hd(half, Shape::filled(x.ndims(), 1));
    Concat<float> cat(grid, {hd, hd});
    DistTensor<float> p(grid, plain(hd)), q(grid, plain(hd)),
        dp(grid, plain(hd)), dq(grid, plain(hd));
    m.concat_s = median_s(reps, [&] {
                   cat.forward({&p, &q}, c);
                   cat.backward(b, {&dp, &dq});
                 }) / n;
  }
  {
    Loss<float> loss(grid, LossDesc::make(LossKind::kCrossEntropyIndices),
                     dist);
    DistTensor<std::int64_t> labels(grid, loss.target_layout());
    labels.interior().for_each([](const Shape&, std::int64_t& v) { v = 0; });
    m.loss_s = median_s(reps, [&] {
                 loss.forward(a, labels);
                 loss.backward(a, labels, c);
               }) / n;
  }
  m.copy_s = median_s(reps, [&] { copy_shard(a, c); }) / n;
}

// Half the round trip of `bytes` between ranks 0 and 1, median of `reps`.
double ping_pong_s(MPI_Comm comm, int bytes, int reps) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<char> buf(static_cast<size_t>(bytes));
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    if (rank == 0) {
      MPI_Send(buf.data(), bytes, MPI_CHAR, 1, 0, comm);
      MPI_Recv(buf.data(), bytes, MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf.data(), bytes, MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), bytes, MPI_CHAR, 0, 0, comm);
    }
    if (r > 0) t.push_back((MPI_Wtime() - start) / 2);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  require(size >= 2, ErrorKind::kInvalidArgument,
          "calibrate measures messages between two ranks: run it with "
          "mpirun -np 2 (got ", size, ")");
  Machine m;
  m.ranks_per_node = 4096;
  m.cores_per_node = static_cast<int>(std::thread::hardware_concurrency());
  if (rank == 0) {
    ProcessGrid grid(MPI_COMM_SELF, Shape{1, 1, 1, 1});
    ProcessGrid grid3(MPI_COMM_SELF, Shape{1, 1, 1, 1, 1});
    const int reps = o.reps;
    // The overhead of a call: a convolution with almost nothing to do.
    m.call_overhead_s = conv_passes(grid, Shape{1, 4, 4, 4}, 5 * reps)[0];
    for (Index c : {4, 16, 64}) {
      for (int sd : {2, 3}) {
        const Shape x = sd == 2 ? Shape{1, c, 256, 256} : Shape{1, c, 32, 32, 32};
        const std::array<double, 3> t =
            conv_passes(sd == 2 ? grid : grid3, x, reps);
        const Index cells = x.volume() / c;
        const double flops = 2.0 * static_cast<double>(cells) * c * c *
                             (sd == 2 ? 9 : 27);
        ConvThroughput tp{static_cast<double>(c), {}};
        for (int p = 0; p < 3; ++p) {
          tp.gflops[p] =
              flops / std::max(t[p] - m.call_overhead_s, 1e-9) / 1e9;
        }
        (sd == 2 ? m.conv2d : m.conv3d).push_back(tp);
      }
    }
    elementwise(grid, Shape{1, 32, 256, 256}, reps, m);
  }
  // Contention: the same convolutions alone on rank 0, then on as many
  // ranks at once as there are cores.
  const int busy = std::min(size, std::max(m.cores_per_node, 1));
  double alone = 0, together = 0;
  for (int round = 0; round < 2; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    double mine = 0;
    if (rank == 0 || (round == 1 && rank < busy)) {
      ProcessGrid grid(MPI_COMM_SELF, Shape{1, 1, 1, 1});
      ProcessGrid grid3(MPI_COMM_SELF, Shape{1, 1, 1, 1, 1});
      for (const auto& t : {conv_passes(grid, Shape{1, 16, 256, 256}, o.reps),
                            conv_passes(grid3, Shape{1, 16, 32, 32, 32},
                                        o.reps)}) {
        mine += t[0] + t[1] + t[2];
      }
    }
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    (round == 0 ? alone : together) = slowest;
  }
  m.contention = std::max(1.0, together / alone);
  m.intra.latency_s = ping_pong_s(MPI_COMM_WORLD, 8, 200);
  const int big = 4 << 20;
  m.intra.bandwidth_Bps =
      big / std::max(ping_pong_s(MPI_COMM_WORLD, big, 10) - m.intra.latency_s,
                     1e-9);
  m.inter = m.intra;  // one node
  if (rank == 0) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
    m.name = std::string("calibrated on ") + host + " " + date + ", " +
             std::to_string(size) + " ranks";
    const std::string text = format_machine(m);
    if (o.out.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      std::FILE* f = std::fopen(o.out.c_str(), "w");
      require(f != nullptr, ErrorKind::kInvalidArgument, "cannot write ",
              o.out);
      std::fputs(text.c_str(), f);
      std::fclose(f);
      std::printf("calibrate: wrote %s\n", o.out.c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace model
}  // namespace distconv

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = distconv::model::run(argc, argv);
  } catch (const distconv::Error& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "calibrate: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
