// A distributed 5-point Jacobi smoother on a periodic 2D field, the smallest
// real use of distconv's halo exchange: each step starts the exchange,
// updates the cells that need no halo while the halos travel, then waits and
// updates the frame of cells next to the halo. The result is gathered and
// compared with the same computation done serially on rank 0.
//
//   mpirun -np 4 stencil_demo --size=1024 --steps=50
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "perf/cli_args.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/scatter_gather.h"
#include "halo/halo_exchange.h"

namespace distconv {
namespace {

struct Options {
  Index size = 1024;
  int steps = 50;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--size=", 0) == 0) {
      o.size = std::stoll(a.substr(7));
    } else if (a.rfind("--steps=", 0) == 0) {
      o.steps = std::stoi(a.substr(8));
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + a +
                                                   " (use --size=N --steps=K)");
    }
  }
  return o;
}

double initial(Index h, Index w, Index n) {
  return std::sin(6.283185307 * h / n) * std::cos(12.56637061 * w / n) +
         ((h * 31 + w * 17) % 7) * 0.1;
}

// One Jacobi step on rows [h0, h1) x cols [w0, w1) of the local buffer.
void update(const float* in, float* out, Index width, Index h0, Index h1,
            Index w0, Index w1) {
  for (Index h = h0; h < h1; ++h) {
    for (Index w = w0; w < w1; ++w) {
      const Index i = h * width + w;
      out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - width] +
                       in[i + width]);
    }
  }
}

void run(const Options& o) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  ProcessGrid grid(MPI_COMM_WORLD, Shape{1, 1, dims[0], dims[1]});
  const Shape global{1, 1, o.size, o.size};
  const std::vector<Boundary> periodic{Boundary::kOpen, Boundary::kOpen,
                                       Boundary::kPeriodic,
                                       Boundary::kPeriodic};
  const HaloLayout layout(Distribution(global, grid.shape()),
                          HaloWidths::symmetric({0, 0, 1, 1}), periodic);
  DistTensor<float> a(grid, layout), b(grid, layout);
  HaloExchange<float> halo(grid, layout);

  std::vector<float> field;
  if (rank == 0) {
    field.resize(global.volume());
    for (Index h = 0; h < o.size; ++h) {
      for (Index w = 0; w < o.size; ++w) {
        field[h * o.size + w] = static_cast<float>(initial(h, w, o.size));
      }
    }
  }
  scatter(rank == 0 ? field.data() : nullptr, a, 0);

  const Shape local = a.local_shape();  // (1, 1, rows + 2, cols + 2)
  const Index rows = local[2] - 2, cols = local[3] - 2, width = local[3];
  MPI_Barrier(grid.comm());
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < o.steps; ++s) {
    halo.start(a);
    // Inner cells read no halo: compute them while the halo travels.
    update(a.data(), b.data(), width, 2, rows, 2, cols);
    halo.wait();
    if (rows > 0 && cols > 0) {  // the frame next to the halo
      update(a.data(), b.data(), width, 1, 2, 1, cols + 1);
      update(a.data(), b.data(), width, std::max<Index>(rows, 2), rows + 1, 1,
             cols + 1);
      update(a.data(), b.data(), width, 2, rows, 1, 2);
      update(a.data(), b.data(), width, 2, rows, std::max<Index>(cols, 2),
             cols + 1);
    }
    std::swap(a, b);
  }
  MPI_Barrier(grid.comm());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();

  std::vector<float> result(rank == 0 ? global.volume() : 0);
  gather(a, rank == 0 ? result.data() : nullptr, 0);
  if (rank != 0) return;
  // The serial reference: the same steps on the whole periodic field.
  std::vector<float> cur = field, next(field.size());
  const Index n = o.size;
  for (int s = 0; s < o.steps; ++s) {
    for (Index h = 0; h < n; ++h) {
      for (Index w = 0; w < n; ++w) {
        auto at = [&](Index y, Index x) {
          return cur[((y + n) % n) * n + (x + n) % n];
        };
        next[h * n + w] = 0.2f * (at(h, w) + at(h, w - 1) + at(h, w + 1) +
                                  at(h - 1, w) + at(h + 1, w));
      }
    }
    std::swap(cur, next);
  }
  double max_error = 0;
  for (size_t i = 0; i < cur.size(); ++i) {
    max_error = std::max<double>(max_error, std::abs(cur[i] - result[i]));
  }
  std::printf(
      "stencil_demo: %lldx%lld periodic field, grid %dx%d (%d ranks), %d "
      "steps in %.3f s (%.2f Mcell-updates/s)\n",
      static_cast<long long>(n), static_cast<long long>(n), dims[0], dims[1],
      size, o.steps, seconds, n * n * double(o.steps) / seconds / 1e6);
  std::printf("stencil_demo: max |distributed - serial| = %g -> %s\n",
              max_error, max_error == 0 ? "identical" : "DIFFERENT");
  if (max_error != 0) throw Error(ErrorKind::kState, "results differ");
}

}  // namespace
}  // namespace distconv

// --help's text.
constexpr const char* kUsage =
    "usage: mpirun -np P stencil_demo [options]\n"
    "A 5-point Jacobi smoother on a periodic N x N field, split over P ranks,\n"
    "checked against the serial computation on rank 0.\n"
    "  --size=N    the field's extent (default 1024)\n"
    "  --steps=K   smoothing steps (default 50)\n"
    "  --help      this text\n";

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
