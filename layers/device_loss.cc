// The loss layer in GPU memory (Loss<T, DeviceSpace>): CUDA kernels over
// the interiors, on LossOptions::stream; each sample's sums come back to
// the host (one wait for the stream) for the reductions over ranks. The
// layer itself is layers/internal/loss_impl.h. Built only with
// --config=cuda.
#include <cuda_runtime_api.h>

#include <vector>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/channel_cells.h"
#include "kernels/cuda/loss_kernels.h"
#include "layers/internal/loss_impl.h"
#include "layers/loss.h"

namespace distconv {
namespace internal {

template <typename T>
class LossBackend<T, DeviceSpace> {
 public:
  template <typename U>
  using ConstView = StridedView<const U, DeviceSpace>;

  explicit LossBackend(const LossOptions& o) : stream_(o.stream) {}

  template <typename Target>
  std::vector<double> sums(const LossCellDesc& d, LossTerms what,
                           const ConstView<T>& x, const ConstView<Target>& t) {
    const Index samples = x.extent()[0];
    std::vector<double> out(2 * samples + 1, 0.0);
    const CellWalk<2> walk =
        cell_walk<2>(x.extent(), {x.strides(), t.strides()});
    if (walk.cells() == 0) return out;
    const Index blocks = loss_sums_blocks(walk);
    const Index count = samples * blocks * 3;
    if (partials_.bytes() < sizeof(double) * count) {
      partials_ = DeviceBuffer(sizeof(double) * count);
    }
    double* partials = static_cast<double*>(partials_.get());
    launch_loss_sums<T, Target>(d, what, walk, x.data(), t.data(), partials,
                                stream_);
    host_.resize(count);
    check_cuda(cudaMemcpyAsync(host_.data(), partials, sizeof(double) * count,
                               cudaMemcpyDeviceToHost, stream_),
               "copying the GPU loss sums to the host");
    check_cuda(cudaStreamSynchronize(stream_), "waiting for the GPU loss sums");
    for (Index n = 0; n < samples; ++n) {
      for (Index b = 0; b < blocks; ++b) {
        const double* p = host_.data() + (n * blocks + b) * 3;
        out[n] += p[0];
        out[samples + n] += p[1];
        out[2 * samples] += p[2];
      }
    }
    return out;
  }

  template <typename Target>
  void gradient(const LossCellDesc& d, double w, const ConstView<T>& x,
                const ConstView<Target>& t,
                const StridedView<T, DeviceSpace>& dx) {
    launch_loss_gradient<T, Target>(
        d, w,
        cell_walk<3>(x.extent(), {dx.strides(), x.strides(), t.strides()}),
        dx.data(), x.data(), t.data(), stream_);
  }

  // The two passes one after the other (no fused kernel on the GPU yet).
  template <typename Target>
  std::vector<double> sums_and_gradient(const LossCellDesc& d, double w,
                                        const ConstView<T>& x,
                                        const ConstView<Target>& t,
                                        const StridedView<T, DeviceSpace>& dx) {
    std::vector<double> out = sums(d, LossTerms::kLossesAndCounts, x, t);
    gradient(d, w, x, t, dx);
    return out;
  }

 private:
  CUstream_st* stream_;
  DeviceBuffer partials_;     // the sums' partials, grown as needed
  std::vector<double> host_;  // their copy on the host
};

}  // namespace internal

#define DISTCONV_INSTANTIATE(T) template class Loss<T, DeviceSpace>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
