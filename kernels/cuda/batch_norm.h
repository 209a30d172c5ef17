// CudaBatchNorm<T>: LocalBatchNorm's passes (kernels/local_batch_norm.h)
// on GPU memory: the per-channel passes of a batch normalisation over one
// rank's shard, a dense channels-last array (N, [D,] H, W, C) of `elements`
// values in device memory, value i in channel i % C. The distributed layer
// (BatchNorm<T, DeviceSpace>, layers/batch_norm.h) adds the reductions
// across ranks.
//
//   CudaBatchNorm<float> k(channels, stream);
//   k.moments(x, n, sums, m2);      // host arrays: waits for the stream
//   k.affine(x, n, mean, a, b, y);  // queued on the stream
//
// The per-channel arrays (sums, means, factors) are host arrays of C
// doubles, as in LocalBatchNorm: the sums' passes (moments,
// gradient_sums) copy their results to the host and wait for the stream;
// the element-wise passes (affine, diff_src) copy their factors to the
// device and return once queued (the factors' copy waits for the work
// already on the stream, as copies from pageable memory do).
//
// Precision: sums in double in a fixed order (the same input gives the
// same sums bit for bit); moments() reads the array twice, its sums first,
// then the squared deviations from their mean, so no cancellation arises
// however large the mean. Element-wise passes compute in double, each
// output rounded once to T. Outputs may be inputs (y == x, dx == dy or x).
#ifndef DISTCONV_KERNELS_CUDA_BATCH_NORM_H_
#define DISTCONV_KERNELS_CUDA_BATCH_NORM_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/device_space.h"
#include "distconv/shape.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// Defined for every element type of distconv/element_types.h.
template <typename T>
class CudaBatchNorm {
 public:
  // channels >= 0; the passes are queued on `stream` (null: the legacy
  // default stream).
  CudaBatchNorm(Index channels, CUstream_st* stream);

  Index channels() const { return channels_; }
  static std::string implementation() { return "cuda direct"; }

  // sums[c] = the sum of channel c's r = elements / C values, m2[c] = the
  // sum of their squared deviations from sums[c] / r.
  void moments(const T* x, Index elements, double* sums, double* m2);
  // y = (x - mean[c]) * a[c] + b[c].
  void affine(const T* x, Index elements, const double* mean, const double* a,
              const double* b, T* y);
  // sum_dy[c] = the sum of dy, sum_dy_dev[c] = of dy * (x - mean[c]).
  void gradient_sums(const T* x, const T* dy, Index elements,
                     const double* mean, double* sum_dy, double* sum_dy_dev);
  // dx = a[c] * ((dy - dy_mean[c]) - (x - mean[c]) * k[c]).
  void diff_src(const T* x, const T* dy, Index elements, const double* mean,
                const double* a, const double* dy_mean, const double* k, T* dx);

 private:
  // Copies the host arrays (C doubles each) to factors_, one after the
  // other, and returns their device copies.
  std::vector<const double*> upload(std::initializer_list<const double*> h);
  // Copies two device arrays of C doubles to the host and waits.
  void download(const double* d0, double* h0, const double* d1, double* h1);
  double* scratch_for(Index rows);

  Index channels_;
  CUstream_st* stream_;
  DeviceBuffer factors_;  // up to four per-channel arrays
  DeviceBuffer results_;  // three per-channel arrays (sums, second, mean)
  DeviceBuffer scratch_;  // the sums' partials
  std::vector<double> staging_;
};

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_BATCH_NORM_H_
