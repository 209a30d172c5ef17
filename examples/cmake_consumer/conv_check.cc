// A distributed convolution over all ranks (H split) checked against the
// same convolution on one rank: what a framework linking the installed
// library would run first. Exits 1 on a mismatch.
//   mpirun -np 2 conv_check
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/process_grid.h"
#include "distconv/scatter_gather.h"
#include "layers/convolution.h"

namespace {

using distconv::ConvDesc;
using distconv::Convolution;
using distconv::Distribution;
using distconv::DistTensor;
using distconv::ProcessGrid;
using distconv::Shape;

// The output of conv(x) gathered on rank 0 of `comm` (all of it there).
std::vector<float> convolve(MPI_Comm comm, const Shape& grid_shape,
                            const ConvDesc& desc, const Shape& shape,
                            const std::vector<float>& x,
                            const std::vector<float>& w,
                            const std::vector<float>& b) {
  ProcessGrid grid(comm, grid_shape);
  Convolution<float> conv(grid, desc, Distribution(shape, grid.shape()));
  DistTensor<float> src(grid, conv.src_layout());
  DistTensor<float> dst(grid, conv.dst_layout());
  distconv::scatter(x.data(), src, 0);
  conv.forward(src, w.data(), b.data(), dst);
  return distconv::gathered(dst, 0);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    const Shape shape{2, 4, 13, 9};
    ConvDesc desc = ConvDesc::make(4, 6, {3, 3});
    desc.padding_lower = desc.padding_upper = {1, 1};
    desc.bias = distconv::ConvBias::kAdd;
    std::vector<float> x(shape.volume()), w(desc.weights_shape().volume()),
        b(6);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.11 * i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1 * i;
    const std::vector<float> split =
        convolve(MPI_COMM_WORLD, Shape{1, 1, size, 1}, desc, shape, x, w, b);
    if (rank == 0) {
      const std::vector<float> whole =
          convolve(MPI_COMM_SELF, Shape{1, 1, 1, 1}, desc, shape, x, w, b);
      double worst = 0;
      for (size_t i = 0; i < whole.size(); ++i) {
        worst = std::fmax(worst, std::fabs(whole[i] - split[i]));
      }
      std::printf("conv_check: %d ranks, %zu outputs, max difference %.3g\n",
                  size, whole.size(), worst);
      status = worst < 1e-4 ? 0 : 1;
    }
  } catch (const distconv::Error& e) {
    std::fprintf(stderr, "conv_check: %s\n", e.what());
    status = 1;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
