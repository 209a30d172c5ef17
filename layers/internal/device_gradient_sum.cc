#include "layers/internal/device_gradient_sum.h"

#include <chrono>

#include "distconv/device_space.h"
#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"
#include "halo/nccl_comm.h"

namespace distconv::internal {

template <typename T>
DeviceGradientSum<T>::DeviceGradientSum(cudaStream_t stream, MPI_Comm comm,
                                        Index weights_size, Index bias_size,
                                        ncclComm_t nccl)
    : stream_(stream),
      weights_size_(weights_size),
      bias_size_(bias_size),
      nccl_(nccl),
      host_(comm, weights_size, bias_size),
      host_sums_(nccl != nullptr ? 0 : weights_size + bias_size) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  alone_ = size == 1;
  // Collectively: a rank failing alone here would leave the others in
  // the NCCL communicator's teardown.
  try {
    run_collectively(comm, [&] {
      sums_ = static_cast<T*>(
          DeviceSpace::allocate(sizeof(T) * (weights_size + bias_size)));
      if (nccl_ == nullptr || alone_) return;
      check_cuda(
          cudaStreamCreateWithFlags(&sum_stream_, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
      for (cudaEvent_t* e : {&ready_, &summed_}) {
        check_cuda(cudaEventCreateWithFlags(e, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
      }
    });
  } catch (...) {
    release();
    throw;
  }
}

template <typename T>
DeviceGradientSum<T>::~DeviceGradientSum() {
  release();
}

template <typename T>
void DeviceGradientSum<T>::release() noexcept {
  if (sum_stream_ != nullptr) {
    cudaStreamSynchronize(sum_stream_);
    cudaStreamDestroy(sum_stream_);
  }
  for (cudaEvent_t e : {ready_, summed_}) {
    if (e != nullptr) cudaEventDestroy(e);
  }
  sum_stream_ = nullptr;
  ready_ = summed_ = nullptr;
  DeviceSpace::deallocate(sums_);
  sums_ = nullptr;
}

template <typename T>
void DeviceGradientSum<T>::zero() {
  require(!in_flight_, ErrorKind::kState,
          "backward_weights called again before wait_gradients");
  check_cuda(cudaMemsetAsync(sums_, 0,
                             sizeof(T) * (weights_size_ + bias_size_), stream_),
             "cudaMemsetAsync of the gradient sums");
}

template <typename T>
void DeviceGradientSum<T>::start(T* diff_weights, T* diff_bias) {
  require(!in_flight_, ErrorKind::kState,
          "backward_weights called again before wait_gradients");
  require(diff_weights != nullptr || weights_size_ == 0,
          ErrorKind::kInvalidArgument, "diff_weights is null");
  require(diff_bias != nullptr || bias_size_ == 0, ErrorKind::kInvalidArgument,
          "the layer adds a bias but diff_bias is null");
  if (on_nccl()) {
    check_cuda(cudaEventRecord(ready_, stream_), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(sum_stream_, ready_, 0),
               "cudaStreamWaitEvent");
    const ncclResult_t code = ncclAllReduce(
        sums_, sums_, static_cast<std::size_t>(weights_size_ + bias_size_),
        nccl_type<T>(), ncclSum, nccl_, sum_stream_);
    require(code == ncclSuccess, ErrorKind::kDevice,
            "ncclAllReduce of the gradients failed: ",
            ncclGetErrorString(code));
    check_cuda(cudaEventRecord(summed_, sum_stream_), "cudaEventRecord");
  } else if (!alone_ && sum_stream_ == nullptr) {  // MPI on host copies
    check_cuda(
        cudaMemcpyAsync(host_.weights(), sums_, sizeof(T) * host_sums_.size(),
                        cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync of the gradients to the host");
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    host_.start(host_sums_.data(),
                bias_size_ > 0 ? host_sums_.data() + weights_size_ : nullptr);
  }
  diff_weights_ = diff_weights;
  diff_bias_ = diff_bias;
  in_flight_ = true;
}

template <typename T>
double DeviceGradientSum<T>::wait() {
  require(in_flight_, ErrorKind::kState,
          "wait_gradients called with no backward_weights in flight");
  double waited = 0;
  const T* from = sums_;
  cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
  if (on_nccl()) {  // the sums stayed on the device
    check_cuda(cudaStreamWaitEvent(stream_, summed_, 0),
               "cudaStreamWaitEvent");
  } else if (!alone_ && sum_stream_ == nullptr) {
    waited = host_.wait();
    from = host_sums_.data();
    kind = cudaMemcpyHostToDevice;
  }
  if (weights_size_ > 0) {
    check_cuda(cudaMemcpyAsync(diff_weights_, from, sizeof(T) * weights_size_,
                               kind, stream_),
               "cudaMemcpyAsync of the weight gradients");
  }
  if (bias_size_ > 0) {
    check_cuda(cudaMemcpyAsync(diff_bias_, from + weights_size_,
                               sizeof(T) * bias_size_, kind, stream_),
               "cudaMemcpyAsync of the bias gradients");
  }
  diff_weights_ = diff_bias_ = nullptr;
  in_flight_ = false;
  return waited;
}

#define DISTCONV_INSTANTIATE(T) template class DeviceGradientSum<T>;
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::internal
