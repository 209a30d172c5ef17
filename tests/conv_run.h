// ConvRun<T>: a Convolution with the four tensors it works on (input,
// output, output gradient, input gradient), allocated from its layouts, and
// the moves between them and global NCHW arrays, and between the global
// weights and this rank's blocks of them. Shared by the benchmark driver
// and the tests.
//
//   ConvRun<float> run(grid, desc, Shape{1, 16, 64, 64});
//   run.scatter_inputs(x, dy);              // global arrays on rank 0
//   run.all_passes(w, b, dw, db);           // fwd, bwd-w, bwd-d, wait
//   run.gather_outputs(y, dx);              // onto rank 0
#ifndef DISTCONV_TESTS_CONV_RUN_H_
#define DISTCONV_TESTS_CONV_RUN_H_

#include <mpi.h>

#include <optional>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/internal/box_copy.h"
#include "distconv/internal/mpi_util.h"
#include "distconv/scatter_gather.h"
#include "layers/convolution.h"

namespace distconv {

template <typename T>
struct ConvRun {
  using P = Compute<T>;  // weights, bias and their gradients

  // With ConvInput::kInPlace planned (conv.plan().input), x and dy hold
  // the shards alone (plain layouts) and the passes get frames.
  ConvRun(const ProcessGrid& grid, const ConvDesc& desc, const Shape& src_shape,
          const ConvolutionOptions& options = {})
      : grid(&grid),
        conv(grid, desc, Distribution(src_shape, grid.shape()), options),
        x(grid, in_place() ? plain(conv.src_layout()) : conv.src_layout()),
        y(grid, conv.dst_layout()),
        dy(grid, in_place() ? conv.dst_layout() : conv.diff_dst_layout()),
        dx(grid, conv.diff_src_layout()) {
    if (in_place()) {
      x_frame.emplace(grid, conv.src_layout());
      dy_frame.emplace(grid, conv.diff_dst_layout());
    }
  }

  bool in_place() const { return conv.plan().input == ConvInput::kInPlace; }

  // x and dy from global arrays on `root` (null elsewhere).
  void scatter_inputs(const T* x_global, const T* dy_global, int root = 0) {
    scatter(x_global, x, root);
    scatter(dy_global, dy, root);
  }
  // This rank's blocks (Convolution::weights_block, bias_block) of the
  // global weights (F, C / groups, k...) and bias (F), given on every rank.
  std::vector<P> weights_block(const P* w) const {
    return block_of(w, conv.geometry().desc().weights_shape(),
                    conv.weights_block());
  }
  std::vector<P> bias_block(const P* b) const {
    if (b == nullptr) return {};
    return block_of(b, Shape{conv.geometry().desc().out_channels},
                    conv.bias_block());
  }
  // The global gradients on every rank from each rank's blocks (the ranks
  // of a channel group hold disjoint blocks covering the whole).
  void assemble(const P* block, const Shape& global, const Box& box,
                P* out) const {
    std::vector<P> whole(global.volume(), P(0));
    internal::unpack_box(block, global, box, whole.data());
    MPI_Allreduce(whole.data(), out, static_cast<int>(whole.size()),
                  internal::mpi_datatype<P>(), MPI_SUM,
                  grid->along(1));
  }
  // Forward, backward-weights, backward-data, then the gradient allreduce,
  // on global weights and gradients (every rank).
  void all_passes(const P* w, const P* b, P* dw, P* db) {
    const std::vector<P> wb = weights_block(w), bb = bias_block(b);
    const bool has_bias = conv.geometry().desc().bias == ConvBias::kAdd &&
                          b != nullptr && db != nullptr;
    std::vector<P> dwb(wb.size()), dbb(bb.size());
    const P* bias = has_bias ? bb.data() : nullptr;
    P* diff_bias = has_bias ? dbb.data() : nullptr;
    if (in_place()) {
      conv.forward(x, *x_frame, wb.data(), bias, y);
      conv.backward_weights(x, *x_frame, dy, dwb.data(), diff_bias);
      conv.backward_data(dy, *dy_frame, wb.data(), dx);
    } else {
      conv.forward(x, wb.data(), bias, y);
      conv.backward_weights(x, dy, dwb.data(), diff_bias);
      conv.backward_data(dy, wb.data(), dx);
    }
    conv.wait_gradients();
    const ConvDesc& desc = conv.geometry().desc();
    assemble(dwb.data(), desc.weights_shape(), conv.weights_block(), dw);
    if (has_bias) {
      assemble(dbb.data(), Shape{desc.out_channels}, conv.bias_block(), db);
    }
  }
  // y and dx onto `root`.
  void gather_outputs(T* y_global, T* dx_global, int root = 0) {
    gather(y, y_global, root);
    gather(dx, dx_global, root);
  }

  const ProcessGrid* grid;
  Convolution<T> conv;
  DistTensor<T> x, y, dy, dx;
  std::optional<DistTensor<T>> x_frame, dy_frame;  // kInPlace only

 private:
  static HaloLayout plain(const HaloLayout& layout) {
    return HaloLayout(layout.distribution())
        .with_storage(layout.storage_order());
  }
  static std::vector<P> block_of(const P* global, const Shape& shape,
                                 const Box& box) {
    std::vector<P> out(box.volume());
    internal::pack_box(global, shape, box, out.data());
    return out;
  }
};

}  // namespace distconv

#endif  // DISTCONV_TESTS_CONV_RUN_H_
