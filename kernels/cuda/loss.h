// CudaLoss<T>: the losses' per-rank passes on strided (N, C, spatial...)
// views of GPU memory, the GPU's counterpart of kernels/local_loss.h with
// the same calls: kernels/cuda/loss_kernels.h's kernels (the host loops'
// cell functions, in double) queued on the stream it was made with. The
// sums come back to the host (one wait for the stream): values[n] the
// loss summed over sample n's cells, values[N + n] their count, values[2N]
// the count of bad class indices. The target views hold T or
// std::int64_t (class indices). Defined for every element type of
// distconv/element_types.h. Built only with --config=cuda.
//
//   CudaLoss<float> loss(loss_cell_desc(desc, classes), stream);
//   std::vector<double> s = loss.sums(LossTerms::kLossesAndCounts, x, t);
//   loss.gradient(1.0 / count, x, t, dx);
#ifndef DISTCONV_KERNELS_CUDA_LOSS_H_
#define DISTCONV_KERNELS_CUDA_LOSS_H_

#include <vector>

#include "distconv/device_space.h"
#include "distconv/strided_view.h"
#include "kernels/channel_cells.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

template <typename T>
class CudaLoss {
 public:
  template <typename U>
  using ConstView = StridedView<const U, DeviceSpace>;
  using View = StridedView<T, DeviceSpace>;

  CudaLoss(const LossCellDesc& cells, CUstream_st* stream)
      : cells_(cells), stream_(stream) {}

  template <typename Target>
  std::vector<double> sums(LossTerms what, const ConstView<T>& x,
                           const ConstView<Target>& t);
  // sums(kLossesAndCounts), then gradient() (no fused kernel on the GPU).
  template <typename Target>
  std::vector<double> sums_and_gradient(double w, const ConstView<T>& x,
                                        const ConstView<Target>& t,
                                        const View& dx);
  // dx = the gradient of every cell's loss, scaled by w (written).
  template <typename Target>
  void gradient(double w, const ConstView<T>& x, const ConstView<Target>& t,
                const View& dx);

 private:
  LossCellDesc cells_;
  CUstream_st* stream_;
  DeviceBuffer partials_;     // the sums' partials, grown as needed
  std::vector<double> host_;  // their copy on the host
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_LOSS_H_
