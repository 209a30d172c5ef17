#include "kernels/cuda/loss.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/loss_kernels.h"

namespace distconv {

template <typename T>
template <typename Target>
std::vector<double> CudaLoss<T>::sums(LossTerms what, const ConstView<T>& x,
                                      const ConstView<Target>& t) {
  const Index samples = x.extent()[0];
  std::vector<double> out(2 * samples + 1, 0.0);
  const CellWalk<2> walk = cell_walk<2>(x.extent(), {x.strides(), t.strides()});
  if (walk.cells() == 0) return out;
  const Index blocks = loss_sums_blocks(walk);
  const Index count = samples * blocks * 3;
  if (partials_.bytes() < sizeof(double) * count) {
    partials_ = DeviceBuffer(sizeof(double) * count);
  }
  double* partials = static_cast<double*>(partials_.get());
  launch_loss_sums<T, Target>(cells_, what, walk, x.data(), t.data(), partials,
                              stream_);
  host_.resize(count);
  internal::check_cuda(
      cudaMemcpyAsync(host_.data(), partials, sizeof(double) * count,
                      cudaMemcpyDeviceToHost, stream_),
      "copying the GPU loss sums to the host");
  internal::check_cuda(cudaStreamSynchronize(stream_),
                       "waiting for the GPU loss sums");
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

template <typename T>
template <typename Target>
void CudaLoss<T>::gradient(double w, const ConstView<T>& x,
                           const ConstView<Target>& t, const View& dx) {
  launch_loss_gradient<T, Target>(
      cells_, w,
      cell_walk<3>(x.extent(), {dx.strides(), x.strides(), t.strides()}),
      dx.data(), x.data(), t.data(), stream_);
}

template <typename T>
template <typename Target>
std::vector<double> CudaLoss<T>::sums_and_gradient(double w,
                                                   const ConstView<T>& x,
                                                   const ConstView<Target>& t,
                                                   const View& dx) {
  std::vector<double> out = sums(LossTerms::kLossesAndCounts, x, t);
  gradient(w, x, t, dx);
  return out;
}

// Every member for both kinds of target.
#define DISTCONV_TARGET(T, Target)                                         \
  template std::vector<double> CudaLoss<T>::sums(                          \
      LossTerms, const ConstView<T>&, const ConstView<Target>&);           \
  template std::vector<double> CudaLoss<T>::sums_and_gradient(             \
      double, const ConstView<T>&, const ConstView<Target>&, const View&); \
  template void CudaLoss<T>::gradient(double, const ConstView<T>&,         \
                                      const ConstView<Target>&, const View&);
#define DISTCONV_INSTANTIATE(T) \
  template class CudaLoss<T>;   \
  DISTCONV_TARGET(T, T)         \
  DISTCONV_TARGET(T, std::int64_t)
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE
#undef DISTCONV_TARGET

}  // namespace distconv
