// The CUDA kernels of batch normalisation on GPU memory (CudaBatchNorm,
// kernels/cuda/batch_norm.h): per-channel sums and the element-wise passes
// over a dense channels-last array of `rows` x `channels` values (value i
// in channel i % channels), queued on `stream`. Every pointer is device
// memory; per-channel arrays hold `channels` doubles. Defined for float,
// double, bf16 and fp16. Built only with --config=cuda.
//
// Sums accumulate in double in a fixed order (no atomics): each block
// sums a tile of rows into a partial per channel, then one thread per
// channel adds the partials in block order, so the same input gives the
// same sums bit for bit, run after run. Element-wise passes compute in
// double and round once to T.
#ifndef DISTCONV_KERNELS_CUDA_BATCH_NORM_KERNELS_H_
#define DISTCONV_KERNELS_CUDA_BATCH_NORM_KERNELS_H_

#include "distconv/bf16.h"
#include "distconv/shape.h"

struct CUstream_st;  // cudaStream_t

namespace distconv {

// What launch_channel_sums sums per channel c, over the rows' values
// x = x[r, c] (and dy = dy[r, c]):
//   kValues             out0 = sum x; with out_mean, also out_mean = out0 /
//                       rows
//   kSquaredDeviations  out0 = sum (x - mean[c])^2
//   kGradient           out0 = sum dy, out1 = sum dy (x - mean[c])
enum class ChannelSum { kValues, kSquaredDeviations, kGradient };

// The scratch launch_channel_sums needs for these sizes, in doubles.
Index channel_sums_scratch(Index rows, Index channels);

// Sums per channel into out0 (and out1 for kGradient). `mean` is read by
// kSquaredDeviations and kGradient, `dy` by kGradient; out_mean may be
// null. rows may be 0 (the sums are then 0). Throws Error(kDevice) if a
// launch fails.
template <typename T>
void launch_channel_sums(ChannelSum what, const T* x, const T* dy, Index rows,
                         Index channels, const double* mean, double* scratch,
                         double* out0, double* out1, double* out_mean,
                         CUstream_st* stream);

// y = (x - mean[c]) a[c] + b[c]; y may be x.
template <typename T>
void launch_batch_norm_affine(const T* x, Index elements, Index channels,
                              const double* mean, const double* a,
                              const double* b, T* y, CUstream_st* stream);

// dx = a[c] ((dy - dy_mean[c]) - (x - mean[c]) k[c]); dx may be x or dy.
template <typename T>
void launch_batch_norm_diff_src(const T* x, const T* dy, Index elements,
                                Index channels, const double* mean,
                                const double* a, const double* dy_mean,
                                const double* k, T* dx, CUstream_st* stream);

}  // namespace distconv

#endif  // DISTCONV_KERNELS_CUDA_BATCH_NORM_KERNELS_H_
