// How a CNN framework that owns its communicator, its memory and its
// parameters embeds a distconv layer, in four steps:
//
//  1. It hands distconv its own communicator; ProcessGrid duplicates it,
//     so the library's messages never mix with the framework's.
//  2. It asks the layer's plan for the layout of each tensor (shard plus
//     halos, channels-last), allocates the buffers from its own allocator
//     (here one arena) and wraps them: DistTensor::wrap copies nothing and
//     owns nothing.
//  3. It keeps its parameters whole and hands the layer this rank's block
//     of them (weights_block(), bias_block(): the whole unless the grid
//     splits channels), and gathers the gradients' blocks back.
//  4. It writes inputs and reads results in place, in global coordinates,
//     through the tensors' interior views.
//
// The program then checks the gathered output, input gradient and weight
// gradient against the reference loops on rank 0 and exits 1 on mismatch.
//
//   mpirun -np 4 embedding [--grid=NxCxHxW] [--timeout_s=S]
// The default grid splits samples and H (channels too with --grid, e.g.
// --grid=1x2x2x1). --timeout_s makes a hung run fail after S seconds.
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "layers/convolution.h"
#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "distconv/scatter_gather.h"
#include "kernels/reference/conv.h"
#include "perf/cli_args.h"

namespace distconv {
namespace {

// The framework's memory: one arena it carves every buffer from.
class Arena {
 public:
  explicit Arena(Index capacity) : storage_(capacity) {}
  float* allocate(Index n) {
    require(used_ + n <= static_cast<Index>(storage_.size()),
            ErrorKind::kInvalidArgument, "arena of ", storage_.size(),
            " floats is full");
    float* p = storage_.data() + used_;
    used_ += n;
    return p;
  }

 private:
  std::vector<float> storage_;
  Index used_ = 0;
};

// The framework's data, defined on global indices so that every rank can
// fill its own part (and rank 0 the whole, for the check).
float input_value(const Shape& i) {
  return std::sin(0.1f * static_cast<float>(i[0] * 7 + i[1] * 5 + i[2] * 3 +
                                             i[3]));
}
float grad_value(const Shape& i) {
  return std::cos(0.2f * static_cast<float>(i[0] + i[1] * 3 + i[2] + i[3] * 2));
}

// Global row-major (NCHW) array of `shape` filled by fn(index).
std::vector<float> global_array(const Shape& shape, float (*fn)(const Shape&)) {
  std::vector<float> out(shape.volume());
  Shape i = Shape::filled(shape.ndims(), 0);
  for (Index k = 0; k < shape.volume(); ++k) {
    out[k] = fn(i);
    for (int d = shape.ndims() - 1; d >= 0 && ++i[d] == shape[d]; --d) {
      i[d] = 0;
    }
  }
  return out;
}

// Calls fn(k, offset) for the k-th element of `box` (row-major) at
// `offset` in a row-major array of extent `shape`.
template <typename Fn>
void for_each_in_box(const Shape& shape, const Box& box, Fn fn) {
  Shape i = Shape::filled(shape.ndims(), 0);
  for (Index k = 0; k < box.volume(); ++k) {
    Index offset = 0;
    for (int d = 0; d < shape.ndims(); ++d) {
      offset = offset * shape[d] + box.lower[d] + i[d];
    }
    fn(k, offset);
    for (int d = shape.ndims() - 1; d >= 0 && ++i[d] == box.extent[d]; --d) {
      i[d] = 0;
    }
  }
}

// Dense row-major copy of `box` of a row-major array of extent `shape`.
std::vector<float> block_of(const std::vector<float>& whole,
                            const Shape& shape, const Box& box) {
  std::vector<float> out(box.volume());
  for_each_in_box(shape, box, [&](Index k, Index at) { out[k] = whole[at]; });
  return out;
}

double max_relative_error(const std::vector<float>& a,
                          const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (float v : b) scale = std::max(scale, std::abs(double(v)));
  for (size_t k = 0; k < a.size(); ++k) {
    worst = std::max(worst, std::abs(double(a[k]) - b[k]));
  }
  return worst / std::max(scale, 1e-30);
}

// NxCxHxW, every extent at least 1.
Shape parse_grid(const std::string& v) {
  const Shape g = parse_dims(v);
  bool positive = g.ndims() == 4;
  for (int d = 0; positive && d < 4; ++d) positive = g[d] >= 1;
  require(positive, ErrorKind::kInvalidArgument, "--grid=", v,
          " is not NxCxHxW");
  return g;
}

int run(int argc, char** argv, MPI_Comm framework_comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(framework_comm, &rank);
  MPI_Comm_size(framework_comm, &size);
  Shape grid_shape{size % 2 == 0 ? 2 : 1, 1, size % 2 == 0 ? size / 2 : size,
                   1};
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("--grid=", 0) == 0) {
      grid_shape = parse_grid(arg.substr(7));
    } else if (arg.rfind("--timeout_s=", 0) == 0) {
      alarm(static_cast<unsigned>(std::stoi(arg.substr(12))));
    } else {
      throw Error(ErrorKind::kInvalidArgument, "unknown option " + arg);
    }
  }

  // 1. The framework's communicator, arranged as the grid.
  ProcessGrid grid(framework_comm, grid_shape);
  const Shape x_shape{4, 6, 24, 20};  // N, C, H, W
  ConvDesc desc = ConvDesc::make(6, 8, {3, 3});
  desc.padding_lower = desc.padding_upper = {1, 1};
  desc.bias = ConvBias::kAdd;
  Convolution<float> conv(grid, desc, Distribution(x_shape, grid.shape()));

  // 2. Buffers from the framework's arena, of the sizes the plan asks for.
  const HaloLayout* layouts[] = {&conv.src_layout(), &conv.dst_layout(),
                                 &conv.diff_dst_layout(),
                                 &conv.diff_src_layout()};
  Index total = 0;
  for (const HaloLayout* l : layouts) total += l->local_shape(rank).volume();
  Arena arena(total);
  auto wrapped = [&](const HaloLayout& layout) {
    const Index n = layout.local_shape(rank).volume();
    return DistTensor<float>::wrap(grid, layout, arena.allocate(n), n);
  };
  DistTensor<float> x = wrapped(conv.src_layout());
  DistTensor<float> y = wrapped(conv.dst_layout());
  DistTensor<float> dy = wrapped(conv.diff_dst_layout());
  DistTensor<float> dx = wrapped(conv.diff_src_layout());

  // 3. The framework's whole parameters, and this rank's blocks of them.
  const Shape w_shape = desc.weights_shape();
  const std::vector<float> w = global_array(w_shape, [](const Shape& i) {
    return 0.05f * static_cast<float>((i[0] * 3 + i[1] * 2 + i[2] + i[3]) % 7) -
           0.1f;
  });
  const std::vector<float> b =
      global_array(Shape{desc.out_channels},
                   [](const Shape& i) { return 0.01f * static_cast<float>(i[0]); });
  const std::vector<float> w_block = block_of(w, w_shape, conv.weights_block());
  const std::vector<float> b_block =
      block_of(b, Shape{desc.out_channels}, conv.bias_block());
  std::vector<float> dw_block(w_block.size()), db_block(b_block.size());

  // 4. Inputs written in place, in global coordinates.
  const Shape x0 = x.shard().lower, dy0 = dy.shard().lower;
  x.interior().for_each(
      [&](const Shape& i, float& v) { v = input_value(i + x0); });
  dy.interior().for_each(
      [&](const Shape& i, float& v) { v = grad_value(i + dy0); });
  conv.forward(x, w_block.data(), b_block.data(), y);
  conv.backward_weights(x, dy, dw_block.data(), db_block.data());
  conv.backward_data(dy, w_block.data(), dx);
  conv.wait_gradients();

  // The check: gathered results against the reference loops on rank 0.
  const Shape y_shape = desc.dst_shape(x_shape);
  const std::vector<float> y_all = gathered(y), dx_all = gathered(dx);
  // The weight gradient's blocks: each rank of a channel group holds one.
  std::vector<float> dw(w.size(), 0.0f);
  std::vector<float> dw_mine(w.size(), 0.0f);
  for_each_in_box(w_shape, conv.weights_block(),
                  [&](Index k, Index at) { dw_mine[at] = dw_block[k]; });
  MPI_Allreduce(dw_mine.data(), dw.data(), static_cast<int>(dw.size()),
                MPI_FLOAT, MPI_SUM, grid.along(1));
  int failed = 0;
  if (rank == 0) {
    const std::vector<float> xg = global_array(x_shape, input_value);
    const std::vector<float> dyg = global_array(y_shape, grad_value);
    std::vector<float> y_ref(y_all.size()), dx_ref(dx_all.size()),
        dw_ref(w.size()), db_ref(b.size());
    reference::conv_fwd(desc, x_shape, xg.data(), w.data(), b.data(), y_shape,
                        y_ref.data());
    reference::conv_bwd_data(desc, y_shape, dyg.data(), w.data(), x_shape,
                             dx_ref.data());
    reference::conv_bwd_weights(desc, x_shape, xg.data(), y_shape, dyg.data(),
                                dw_ref.data(), db_ref.data());
    const double errors[] = {max_relative_error(y_all, y_ref),
                             max_relative_error(dx_all, dx_ref),
                             max_relative_error(dw, dw_ref)};
    const char* names[] = {"output", "input gradient", "weight gradient"};
    for (int k = 0; k < 3; ++k) {
      const bool ok = errors[k] <= 1e-5;
      failed |= !ok;
      std::printf("[embedding] grid %s, %s: max relative error %.2e %s\n",
                  grid.shape().to_string().c_str(), names[k], errors[k],
                  ok ? "PASS" : "FAIL");
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, framework_comm);
  return failed;
}

}  // namespace
}  // namespace distconv

// --help's text.
constexpr const char* kUsage =
    "usage: mpirun -np P embedding [options]\n"
    "A framework's view of a distconv convolution (its communicator, memory and\n"
    "parameters), checked against the reference loops on rank 0.\n"
    "  --grid=NxCxHxW  the process grid (default 2 x 1 x P/2 x 1 for even P,\n"
    "                  else 1 x 1 x P x 1)\n"
    "  --timeout_s=S   a hung run fails after S seconds\n"
    "  --help          this text\n";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (distconv::help_printed(argc, argv, kUsage)) {
    MPI_Finalize();
    return 0;
  }
  // The framework's own communicator (here a copy of the world's).
  MPI_Comm framework_comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &framework_comm);
  int status = 0;
  try {
    status = distconv::run(argc, argv, framework_comm);
  } catch (const distconv::Error& e) {  // the same on every rank
    std::fprintf(stderr, "embedding: %s\n", e.what());
    status = 2;
  }
  MPI_Comm_free(&framework_comm);
  MPI_Finalize();
  return status;
}
