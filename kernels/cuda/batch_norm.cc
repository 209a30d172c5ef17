#include "kernels/cuda/batch_norm.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "kernels/cuda/batch_norm_kernels.h"

namespace distconv {

using internal::check_cuda;

template <typename T>
CudaBatchNorm<T>::CudaBatchNorm(Index channels, CUstream_st* stream)
    : channels_(channels),
      stream_(stream),
      factors_(sizeof(double) * 4 * std::max<Index>(channels, 0)),
      results_(sizeof(double) * 3 * std::max<Index>(channels, 0)) {
  require(channels >= 0, ErrorKind::kInvalidArgument,
          "batch normalisation needs a channel count >= 0, not ", channels);
}

template <typename T>
std::vector<const double*> CudaBatchNorm<T>::upload(
    std::initializer_list<const double*> h) {
  staging_.clear();
  for (const double* a : h) staging_.insert(staging_.end(), a, a + channels_);
  check_cuda(cudaMemcpyAsync(factors_.get(), staging_.data(),
                             sizeof(double) * staging_.size(),
                             cudaMemcpyHostToDevice, stream_),
             "copying batch normalisation factors to the device");
  std::vector<const double*> out;
  const double* d = static_cast<const double*>(factors_.get());
  for (size_t i = 0; i < h.size(); ++i) out.push_back(d + i * channels_);
  return out;
}

template <typename T>
void CudaBatchNorm<T>::download(const double* d0, double* h0,
                                const double* d1, double* h1) {
  const size_t bytes = sizeof(double) * channels_;
  check_cuda(cudaMemcpyAsync(h0, d0, bytes, cudaMemcpyDeviceToHost, stream_),
             "copying batch normalisation sums to the host");
  check_cuda(cudaMemcpyAsync(h1, d1, bytes, cudaMemcpyDeviceToHost, stream_),
             "copying batch normalisation sums to the host");
  check_cuda(cudaStreamSynchronize(stream_),
             "waiting for the batch normalisation sums");
}

template <typename T>
double* CudaBatchNorm<T>::scratch_for(Index rows) {
  const size_t bytes =
      sizeof(double) * channel_sums_scratch(rows, channels_);
  if (scratch_.bytes() < bytes) scratch_ = DeviceBuffer(bytes);
  return static_cast<double*>(scratch_.get());
}

template <typename T>
void CudaBatchNorm<T>::moments(const T* x, Index elements, double* sums,
                               double* m2) {
  if (channels_ == 0) return;
  const Index rows = elements / channels_;
  double* r = static_cast<double*>(results_.get());
  double* scratch = scratch_for(rows);
  double* mean = r + 2 * channels_;
  launch_channel_sums<T>(ChannelSum::kValues, x, nullptr, rows, channels_,
                         nullptr, scratch, r, nullptr, mean, stream_);
  launch_channel_sums<T>(ChannelSum::kSquaredDeviations, x, nullptr, rows,
                         channels_, mean, scratch, r + channels_, nullptr,
                         nullptr, stream_);
  download(r, sums, r + channels_, m2);
}

template <typename T>
void CudaBatchNorm<T>::affine(const T* x, Index elements, const double* mean,
                              const double* a, const double* b, T* y) {
  if (channels_ == 0 || elements == 0) return;
  const std::vector<const double*> f = upload({mean, a, b});
  launch_batch_norm_affine<T>(x, elements, channels_, f[0], f[1], f[2], y,
                              stream_);
}

template <typename T>
void CudaBatchNorm<T>::gradient_sums(const T* x, const T* dy, Index elements,
                                     const double* mean, double* sum_dy,
                                     double* sum_dy_dev) {
  if (channels_ == 0) return;
  const Index rows = elements / channels_;
  double* r = static_cast<double*>(results_.get());
  const std::vector<const double*> f = upload({mean});
  launch_channel_sums<T>(ChannelSum::kGradient, x, dy, rows, channels_, f[0],
                         scratch_for(rows), r, r + channels_, nullptr,
                         stream_);
  download(r, sum_dy, r + channels_, sum_dy_dev);
}

template <typename T>
void CudaBatchNorm<T>::diff_src(const T* x, const T* dy, Index elements,
                                const double* mean, const double* a,
                                const double* dy_mean, const double* k,
                                T* dx) {
  if (channels_ == 0 || elements == 0) return;
  const std::vector<const double*> f = upload({mean, a, dy_mean, k});
  launch_batch_norm_diff_src<T>(x, dy, elements, channels_, f[0], f[1], f[2],
                                f[3], dx, stream_);
}

#define DISTCONV_INSTANTIATE(T) template class CudaBatchNorm<T>;
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
