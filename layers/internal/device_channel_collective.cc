#include "layers/internal/device_channel_collective.h"

#include "distconv/internal/cuda_check.h"
#include "layers/internal/device_staging.h"

namespace distconv::internal {
namespace {

constexpr const char* kWhat = "channel collective";

template <typename T>
void to_host(cudaStream_t stream, T* host, const T* device, Index n) {
  stage_to_host(stream, host, device, sizeof(T) * n, kWhat);
}

template <typename T>
void to_device(cudaStream_t stream, T* device, const T* host, Index n) {
  stage_to_device(stream, device, host, sizeof(T) * n, kWhat);
}

}  // namespace

template <typename T>
DeviceChannelCollective<T>::DeviceChannelCollective(
    cudaStream_t stream, MPI_Comm comm, const BlockPartition& channels,
    Index positions)
    : stream_(stream),
      host_(comm, channels, positions),
      block_(host_.block_size()),
      full_(host_.full_size()) {}

template <typename T>
void DeviceChannelCollective<T>::allgather(const T* block, T* full) {
  to_host(stream_, block_.data(), block, host_.block_size());
  host_.allgather(block_.data(), full_.data());
  to_device(stream_, full, full_.data(), host_.full_size());
}

template <typename T>
void DeviceChannelCollective<T>::reduce_scatter(const T* full, T* block) {
  to_host(stream_, full_.data(), full, host_.full_size());
  host_.reduce_scatter(full_.data(), block_.data());
  to_device(stream_, block, block_.data(), host_.block_size());
}

template <typename T>
void staged_sendrecv(cudaStream_t stream, MPI_Comm comm, const T* send,
                     Index n_send, int to, T* recv, Index n_recv, int from) {
  std::vector<T> out(n_send), in(n_recv);
  to_host(stream, out.data(), send, n_send);
  sendrecv(comm, out.data(), n_send, to, in.data(), n_recv, from);
  to_device(stream, recv, in.data(), n_recv);
  // `in` is freed on return: the copy must have read it.
  check_cuda(cudaStreamSynchronize(stream),
             "channel collective: waiting for the stream");
}

template class DeviceChannelCollective<float>;
template class DeviceChannelCollective<double>;
template class DeviceChannelCollective<bf16>;
template class DeviceChannelCollective<fp16>;
template void staged_sendrecv(cudaStream_t, MPI_Comm, const float*, Index, int,
                              float*, Index, int);
template void staged_sendrecv(cudaStream_t, MPI_Comm, const double*, Index, int,
                              double*, Index, int);
template void staged_sendrecv(cudaStream_t, MPI_Comm, const bf16*, Index, int,
                              bf16*, Index, int);
template void staged_sendrecv(cudaStream_t, MPI_Comm, const fp16*, Index, int,
                              fp16*, Index, int);

}  // namespace distconv::internal
