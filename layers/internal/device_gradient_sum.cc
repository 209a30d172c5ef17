#include "layers/internal/device_gradient_sum.h"

#include <chrono>

#include "distconv/device_space.h"
#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

template <typename T>
DeviceGradientSum<T>::DeviceGradientSum(cudaStream_t stream, MPI_Comm comm,
                                        Index weights_size, Index bias_size)
    : stream_(stream),
      weights_size_(weights_size),
      bias_size_(bias_size),
      host_(comm, weights_size, bias_size),
      host_sums_(weights_size + bias_size) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  alone_ = size == 1;
  sums_ = static_cast<T*>(
      DeviceSpace::allocate(sizeof(T) * (weights_size + bias_size)));
}

template <typename T>
DeviceGradientSum<T>::~DeviceGradientSum() {
  DeviceSpace::deallocate(sums_);
}

template <typename T>
void DeviceGradientSum<T>::zero() {
  require(!in_flight_, ErrorKind::kState,
          "backward_weights called again before wait_gradients");
  check_cuda(cudaMemsetAsync(sums_, 0, sizeof(T) * host_sums_.size(), stream_),
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
  if (!alone_) {
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
  if (!alone_) {
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

template class DeviceGradientSum<float>;
template class DeviceGradientSum<double>;

}  // namespace distconv::internal
