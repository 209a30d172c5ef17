#include "layers/internal/channel_collective.h"

#include <climits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/box_copy.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

template <typename T>
ChannelCollective<T>::ChannelCollective(MPI_Comm comm,
                                        const BlockPartition& channels,
                                        Index positions)
    : comm_(comm), channels_(channels), positions_(positions) {
  int size = 0;
  check_mpi(MPI_Comm_rank(comm_, &member_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  require(size == channels_.parts(), ErrorKind::kGridMismatch,
          "channel collective over ", size, " ranks for ", channels_.parts(),
          " channel parts");
  counts_.resize(size);
  displs_.resize(size);
  Index offset = 0;
  for (int m = 0; m < size; ++m) {
    const Index count = positions_ * channels_.size(m);
    require(count <= INT_MAX && offset <= INT_MAX, ErrorKind::kUnsupported,
            "a channel block of ", count, " elements at offset ", offset,
            " exceeds MPI's int counts");
    counts_[m] = static_cast<int>(count);
    displs_[m] = static_cast<int>(offset);
    offset += count;
  }
  staging_.resize(offset);
}

template <typename T>
Shape ChannelCollective<T>::full_shape() const {
  return Shape{positions_, channels_.extent()};
}

template <typename T>
Box ChannelCollective<T>::block_box(int member) const {
  return {Shape{0, channels_.begin(member)},
          Shape{positions_, channels_.size(member)}};
}

template <typename T>
Index ChannelCollective<T>::block_size() const {
  return counts_[member_];
}

template <typename T>
void ChannelCollective<T>::allgather(const T* block, T* full) {
  check_mpi(MPI_Allgatherv(block, counts_[member_], mpi_datatype<T>(),
                           staging_.data(), counts_.data(), displs_.data(),
                           mpi_datatype<T>(), comm_),
            "MPI_Allgatherv");
  for (int m = 0; m < channels_.parts(); ++m) {
    unpack_box(staging_.data() + displs_[m], full_shape(), block_box(m), full);
  }
}

template <typename T>
void ChannelCollective<T>::reduce_scatter(const T* full, T* block) {
  for (int m = 0; m < channels_.parts(); ++m) {
    pack_box(full, full_shape(), block_box(m), staging_.data() + displs_[m]);
  }
  check_mpi(MPI_Reduce_scatter(staging_.data(), block, counts_.data(),
                               mpi_datatype<T>(), sum_.get(), comm_),
            "MPI_Reduce_scatter");
}

template <typename T>
void sendrecv(MPI_Comm comm, const T* send, Index n_send, int to, T* recv,
              Index n_recv, int from) {
  check_mpi(MPI_Sendrecv(send, static_cast<int>(n_send), mpi_datatype<T>(), to,
                         0, recv, static_cast<int>(n_recv), mpi_datatype<T>(),
                         from, 0, comm, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
}

#define DISTCONV_INSTANTIATE(T)        \
  template class ChannelCollective<T>; \
  template void sendrecv(MPI_Comm, const T*, Index, int, T*, Index, int);
DISTCONV_FOR_EACH_ELEMENT_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::internal
