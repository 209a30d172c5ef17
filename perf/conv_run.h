// ConvRun<T>: a Convolution with the four tensors it works on (input,
// output, output gradient, input gradient), allocated from its layouts, and
// the moves between them and global NCHW arrays. Shared by the benchmark
// driver and the tests.
//
//   ConvRun<float> run(grid, desc, Shape{1, 16, 64, 64});
//   run.scatter_inputs(x, dy);              // global arrays on rank 0
//   run.all_passes(w, b, dw, db);           // fwd, bwd-w, bwd-d, wait
//   run.gather_outputs(y, dx);              // onto rank 0
#ifndef DISTCONV_PERF_CONV_RUN_H_
#define DISTCONV_PERF_CONV_RUN_H_

#include "distconv/convolution.h"
#include "distconv/dist_tensor.h"
#include "distconv/scatter_gather.h"

namespace distconv {

template <typename T>
struct ConvRun {
  ConvRun(const ProcessGrid& grid, const ConvDesc& desc, const Shape& src_shape,
          const ConvolutionOptions& options = {})
      : conv(grid, desc, Distribution(src_shape, grid.shape()), options),
        x(grid, conv.src_layout()),
        y(grid, conv.dst_layout()),
        dy(grid, conv.diff_dst_layout()),
        dx(grid, conv.diff_src_layout()) {}

  // x and dy from global arrays on `root` (null elsewhere).
  void scatter_inputs(const T* x_global, const T* dy_global, int root = 0) {
    scatter(x_global, x, root);
    scatter(dy_global, dy, root);
  }
  // Forward, backward-weights, backward-data, then the gradient allreduce.
  void all_passes(const T* w, const T* b, T* dw, T* db) {
    conv.forward(x, w, b, y);
    conv.backward_weights(x, dy, dw, db);
    conv.backward_data(dy, w, dx);
    conv.wait_gradients();
  }
  // y and dx onto `root`.
  void gather_outputs(T* y_global, T* dx_global, int root = 0) {
    gather(y, y_global, root);
    gather(dx, dx_global, root);
  }

  Convolution<T> conv;
  DistTensor<T> x, y, dy, dx;
};

}  // namespace distconv

#endif  // DISTCONV_PERF_CONV_RUN_H_
