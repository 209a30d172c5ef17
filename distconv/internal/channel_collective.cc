#include "distconv/internal/channel_collective.h"

#include <climits>
#include <cstring>

#include "distconv/error.h"
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
Index ChannelCollective<T>::block_size() const {
  return counts_[member_];
}

template <typename T>
void ChannelCollective<T>::allgather(const T* block, T* full) {
  check_mpi(MPI_Allgatherv(block, counts_[member_], mpi_datatype<T>(),
                           staging_.data(), counts_.data(), displs_.data(),
                           mpi_datatype<T>(), comm_),
            "MPI_Allgatherv");
  const Index c = channels_.extent();
  for (int m = 0; m < channels_.parts(); ++m) {
    const Index cm = channels_.size(m);
    if (cm == 0) continue;
    const T* from = staging_.data() + displs_[m];
    T* to = full + channels_.begin(m);
    for (Index p = 0; p < positions_; ++p) {
      std::memcpy(to + p * c, from + p * cm, sizeof(T) * cm);
    }
  }
}

template <typename T>
void ChannelCollective<T>::reduce_scatter(const T* full, T* block) {
  const Index c = channels_.extent();
  for (int m = 0; m < channels_.parts(); ++m) {
    const Index cm = channels_.size(m);
    if (cm == 0) continue;
    const T* from = full + channels_.begin(m);
    T* to = staging_.data() + displs_[m];
    for (Index p = 0; p < positions_; ++p) {
      std::memcpy(to + p * cm, from + p * c, sizeof(T) * cm);
    }
  }
  check_mpi(MPI_Reduce_scatter(staging_.data(), block, counts_.data(),
                               mpi_datatype<T>(), MPI_SUM, comm_),
            "MPI_Reduce_scatter");
}

template class ChannelCollective<float>;
template class ChannelCollective<double>;

}  // namespace distconv::internal
