#include "layers/internal/gradient_sum.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "distconv/element_types.h"
#include "distconv/error.h"
#include "distconv/internal/agreement.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

template <typename T>
GradientSum<T>::GradientSum(MPI_Comm comm, Index weights_size, Index bias_size)
    : weights_size_(weights_size), bias_size_(bias_size) {
  // Ranks whose counts differ would fail inside the allreduce's
  // completion, which Open MPI reports on MPI_COMM_WORLD's handler (fatal
  // by default) whatever the communicator's: they are refused here.
  agree(comm, Fingerprint("gradient allreduce")
                  .add("weight elements", weights_size)
                  .add("bias elements", bias_size));
  // One MPI_Iallreduce sums everything: its count is an int (the same on
  // every rank now, so every rank throws alike).
  const Index total = weights_size + bias_size;
  require(total <= INT_MAX, ErrorKind::kUnsupported, "a weight gradient of ",
          total, " elements exceeds MPI's count limit of ", INT_MAX);
  sums_.resize(static_cast<size_t>(total));
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
}

template <typename T>
GradientSum<T>::~GradientSum() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

template <typename T>
void GradientSum<T>::zero() {
  require(!in_flight_, ErrorKind::kState,
          "backward_weights called again before wait_gradients");
  std::fill(sums_.begin(), sums_.end(), T(0));
}

template <typename T>
void GradientSum<T>::start(T* diff_weights, T* diff_bias) {
  require(diff_weights != nullptr || weights_size_ == 0,
          ErrorKind::kInvalidArgument, "diff_weights is null");
  require(diff_bias != nullptr || bias_size_ == 0, ErrorKind::kInvalidArgument,
          "the layer adds a bias but diff_bias is null");
  require(!in_flight_, ErrorKind::kState,
          "backward_weights called again before wait_gradients");
  check_mpi(
      MPI_Iallreduce(MPI_IN_PLACE, sums_.data(), static_cast<int>(sums_.size()),
                     mpi_datatype<T>(), MPI_SUM, comm_, &request_),
      "MPI_Iallreduce");
  diff_weights_ = diff_weights;
  diff_bias_ = diff_bias;
  in_flight_ = true;
}

template <typename T>
void GradientSum<T>::poke() {
  if (request_ == MPI_REQUEST_NULL) return;
  int done = 0;
  check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
}

template <typename T>
double GradientSum<T>::wait() {
  require(in_flight_, ErrorKind::kState,
          "wait_gradients called with no backward_weights in flight");
  const auto t0 = std::chrono::steady_clock::now();
  check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::copy(sums_.begin(), sums_.begin() + weights_size_, diff_weights_);
  if (bias_size_ > 0) {
    std::copy(sums_.begin() + weights_size_, sums_.end(), diff_bias_);
  }
  diff_weights_ = diff_bias_ = nullptr;
  in_flight_ = false;
  return waited;
}

#define DISTCONV_INSTANTIATE(T) template class GradientSum<T>;
DISTCONV_FOR_EACH_COMPUTE_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

}  // namespace distconv::internal
