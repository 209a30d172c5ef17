#include "layers/internal/device_channel_collective.h"

#include "distconv/element_types.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"
#include "halo/nccl_comm.h"
#include "layers/internal/host_staging.h"

namespace distconv::internal {
namespace {

constexpr const char* kWhat = "channel collective";

template <typename T>
void to_host(cudaStream_t stream, T* host, const T* device, Index n) {
  stage_to_host(Exec<DeviceSpace>(stream), host, device, sizeof(T) * n, kWhat);
}

template <typename T>
void to_device(cudaStream_t stream, T* device, const T* host, Index n) {
  stage_to_device(Exec<DeviceSpace>(stream), device, host, sizeof(T) * n,
                  kWhat);
}

}  // namespace

template <typename T>
DeviceChannelCollective<T>::DeviceChannelCollective(
    cudaStream_t stream, MPI_Comm comm, const BlockPartition& channels,
    Index positions, ncclComm_t nccl)
    : stream_(stream),
      host_(comm, channels, positions),
      nccl_(nccl),
      channels_(channels) {
  check_mpi(MPI_Comm_rank(comm, &member_), "MPI_Comm_rank");
  if (nccl_ == nullptr) {
    block_.resize(static_cast<std::size_t>(host_.block_size()));
    full_.resize(static_cast<std::size_t>(host_.full_size()));
    return;
  }
  // Collectively: a rank failing alone would leave the others in NCCL.
  run_collectively(
      comm, [&] { blocks_ = DeviceBuffer(sizeof(T) * host_.full_size()); });
}

template <typename T>
template <typename Fn>
void DeviceChannelCollective<T>::for_each_block(Fn fn) const {
  Index offset = 0;
  for (int m = 0; m < channels_.parts(); ++m) {
    const Index width = channels_.size(m);
    if (host_.positions() > 0 && width > 0) {
      fn(m, blocks() + offset, channels_.begin(m), width);
    }
    offset += host_.positions() * width;
  }
}

// The group is ended whatever happens inside it (an open group would defer
// every later NCCL call on this thread); the first failure is thrown after.
template <typename T>
template <typename Call>
void DeviceChannelCollective<T>::nccl_group(const char* what, Call call) const {
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  ncclResult_t code = ncclSuccess;
  for_each_block([&](int m, T* b, Index, Index width) {
    if (code != ncclSuccess) return;
    code = call(m, b, static_cast<std::size_t>(host_.positions() * width));
  });
  const ncclResult_t end = ncclGroupEnd();
  check_nccl(code, what);
  check_nccl(end, "ncclGroupEnd");
}

template <typename T>
void DeviceChannelCollective<T>::copy_rows(T* to, Index to_pitch, const T* from,
                                           Index from_pitch,
                                           Index width) const {
  check_cuda(cudaMemcpy2DAsync(to, sizeof(T) * to_pitch, from,
                               sizeof(T) * from_pitch, sizeof(T) * width,
                               static_cast<std::size_t>(host_.positions()),
                               cudaMemcpyDeviceToDevice, stream_),
             kWhat, ": placing a channel block");
}

template <typename T>
void DeviceChannelCollective<T>::allgather(const T* block, T* full) {
  if (nccl_ == nullptr) {
    to_host(stream_, block_.data(), block, host_.block_size());
    host_.allgather(block_.data(), full_.data());
    to_device(stream_, full, full_.data(), host_.full_size());
    return;
  }
  // Member m's block, broadcast from it, at its place in the blocks.
  nccl_group("ncclBroadcast", [&](int m, T* b, std::size_t n) {
    return ncclBroadcast(m == member_ ? block : b, b, n, nccl_type<T>(), m,
                         nccl_, stream_);
  });
  // Each block (positions x its channels) at its channels of `full`.
  const Index all = channels_.extent();
  for_each_block([&](int, const T* b, Index c0, Index width) {
    copy_rows(full + c0, all, b, width, width);
  });
}

template <typename T>
void DeviceChannelCollective<T>::reduce_scatter(const T* full, T* block) {
  if (nccl_ == nullptr) {
    to_host(stream_, full_.data(), full, host_.full_size());
    host_.reduce_scatter(full_.data(), block_.data());
    to_device(stream_, block, block_.data(), host_.block_size());
    return;
  }
  const Index all = channels_.extent();
  for_each_block([&](int, T* b, Index c0, Index width) {
    copy_rows(b, width, full + c0, all, width);
  });
  // Every member's partial sums of member m's block, summed into it.
  nccl_group("ncclReduce", [&](int m, T* b, std::size_t n) {
    return ncclReduce(b, m == member_ ? block : b, n, nccl_type<T>(), ncclSum,
                      m, nccl_, stream_);
  });
}

}  // namespace distconv::internal

namespace distconv {

template <typename T>
void sendrecv(const Exec<DeviceSpace>& exec, MPI_Comm comm, const T* send,
              Index n_send, int to, T* recv, Index n_recv, int from) {
  std::vector<T> out(n_send), in(n_recv);
  internal::stage_to_host(exec, out.data(), send, sizeof(T) * out.size(),
                          internal::kWhat);
  internal::sendrecv(comm, out.data(), n_send, to, in.data(), n_recv, from);
  internal::stage_to_device(exec, recv, in.data(), sizeof(T) * in.size(),
                            internal::kWhat);
  // `in` is freed on return: the copy must have read it.
  internal::wait_for(exec, "channel collective: waiting for the stream");
}

#define DISTCONV_INSTANTIATE(T)                                               \
  template class internal::DeviceChannelCollective<T>;                        \
  template void sendrecv(const Exec<DeviceSpace>&, MPI_Comm, const T*, Index, \
                         int, T*, Index, int);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv
