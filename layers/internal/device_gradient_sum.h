// DeviceGradientSum<T>: GradientSum (gradient_sum.h) for gradients in GPU
// memory. Local partial sums live on the device. Given an NCCL
// communicator, start() queues an ncclAllReduce of them on a stream of its
// own (after the work queued on the caller's stream) and wait() makes the
// caller's stream wait for it: the host never waits, and the sum overlaps
// what the caller queues in between (backward-data). Without one, start()
// copies them to the host (waiting for the stream) and starts an MPI
// allreduce there. wait() then queues the sums' copy into the caller's
// device arrays on the stream. Over one rank nothing leaves the device and
// the host never waits. Built only with --config=cuda.
#ifndef DISTCONV_LAYERS_INTERNAL_DEVICE_GRADIENT_SUM_H_
#define DISTCONV_LAYERS_INTERNAL_DEVICE_GRADIENT_SUM_H_

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <vector>

#include "distconv/shape.h"
#include "layers/internal/gradient_sum.h"

namespace distconv::internal {

// Defined for float and double.
template <typename T>
class DeviceGradientSum {
 public:
  // `nccl`: a communicator over comm's ranks (kept by the caller), or null
  // for MPI on host copies.
  DeviceGradientSum(cudaStream_t stream, MPI_Comm comm, Index weights_size,
                    Index bias_size, ncclComm_t nccl = nullptr);
  ~DeviceGradientSum();
  DeviceGradientSum(const DeviceGradientSum&) = delete;
  DeviceGradientSum& operator=(const DeviceGradientSum&) = delete;

  void zero();  // queued on the stream
  T* weights() { return sums_; }
  T* bias() { return bias_size_ > 0 ? sums_ + weights_size_ : nullptr; }
  void start(T* diff_weights, T* diff_bias);
  void poke() { host_.poke(); }
  double wait();

 private:
  void release() noexcept;
  // Whether the sums travel by NCCL (none of zero gradients: the sizes
  // are alike on every rank).
  bool on_nccl() const {
    return sum_stream_ != nullptr && weights_size_ + bias_size_ > 0;
  }

  cudaStream_t stream_;
  Index weights_size_, bias_size_;
  bool alone_;         // a communicator of one rank
  T* sums_ = nullptr;  // device
  ncclComm_t nccl_;
  cudaStream_t sum_stream_ = nullptr;  // NCCL's allreduce
  cudaEvent_t ready_ = nullptr, summed_ = nullptr;
  GradientSum<T> host_;
  std::vector<T> host_sums_;  // the allreduce's result
  T* diff_weights_ = nullptr;
  T* diff_bias_ = nullptr;
  bool in_flight_ = false;
};

}  // namespace distconv::internal

#endif  // DISTCONV_LAYERS_INTERNAL_DEVICE_GRADIENT_SUM_H_
