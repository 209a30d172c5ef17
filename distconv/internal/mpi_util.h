// Internal MPI helpers: error-code checking and element datatypes.
#ifndef DISTCONV_INTERNAL_MPI_UTIL_H_
#define DISTCONV_INTERNAL_MPI_UTIL_H_

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distconv/bf16.h"

namespace distconv::internal {

// Throws Error(kMpi) naming the call and MPI's message when code != success.
// Communicators made by the library return errors instead of aborting.
void check_mpi(int code, const char* call);

// MPI_Waitall on `count` requests; throws Error(kMpi) on failure with the
// error of the first failed request (not MPI's generic "error code in
// status"). The vector form also empties the list, whatever happens.
void wait_all(int count, MPI_Request* requests);
void wait_all(std::vector<MPI_Request>& requests);

// Runs `step` on every rank of `comm` (a collective call). If it throws
// distconv::Error on some ranks, every rank throws the Error of the lowest
// of them: same kind, same message, with "(on rank R)" added; so a local
// failure (a device allocation, say) leaves no rank going on alone into
// the next collective. A failed allocation (std::bad_alloc) is an Error
// of kind kInvalidArgument, "cannot allocate memory (...)", like any
// other. Other exceptions are not caught. MPI_COMM_NULL
// stands for this rank alone: `step` runs, and its Error propagates as is.
void run_collectively(MPI_Comm comm, const std::function<void()>& step);

// Every rank's `mine` (bytes, none included), in rank order, on every
// rank of `comm`: MPI_Allgather of the lengths, then MPI_Allgatherv.
// Collective; throws Error(kMpi) on failure, and on every rank
// Error(kInvalidArgument) where the bytes of all ranks together pass
// INT_MAX (MPI's counts).
std::vector<std::string> allgather_bytes(MPI_Comm comm,
                                         const std::string& mine);

// A communicator this object owns: MPI_Comm_split of `comm` (errors
// returned, not fatal), freed with the object. Collective over `comm`.
class OwnedComm {
 public:
  OwnedComm() = default;
  OwnedComm(MPI_Comm comm, int color, int key);
  ~OwnedComm();
  OwnedComm(OwnedComm&& other) noexcept
      : comm_(std::exchange(other.comm_, MPI_COMM_NULL)) {}
  OwnedComm& operator=(OwnedComm&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

template <typename T>
MPI_Datatype mpi_datatype();
template <> inline MPI_Datatype mpi_datatype<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_datatype<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_datatype<std::int32_t>() { return MPI_INT32_T; }
template <> inline MPI_Datatype mpi_datatype<std::int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype mpi_datatype<std::uint8_t>() { return MPI_UINT8_T; }
// bf16 and fp16 travel as their 16 bits; sums need SumOp<T>.
template <> inline MPI_Datatype mpi_datatype<bf16>() { return MPI_UINT16_T; }
template <> inline MPI_Datatype mpi_datatype<fp16>() { return MPI_UINT16_T; }

// An MPI op that adds two arrays of T (bf16 or fp16) sent as
// mpi_datatype<T>(), in fp32 with one rounding per element (MPI_Op_create;
// MPI_Op_free it).
template <typename T>
MPI_Op make_narrow_sum();

// The MPI op summing elements of T: MPI_SUM for float and double; for bf16
// and fp16 an op of this object's (make_narrow_sum), freed with it.
template <typename T>
class SumOp {
 public:
  SumOp() {
    if constexpr (kNarrow<T>) op_ = make_narrow_sum<T>();
  }
  ~SumOp() {
    if (op_ != MPI_SUM && op_ != MPI_OP_NULL) MPI_Op_free(&op_);
  }
  SumOp(SumOp&& other) noexcept : op_(std::exchange(other.op_, MPI_OP_NULL)) {}
  SumOp& operator=(SumOp&& other) noexcept {
    std::swap(op_, other.op_);
    return *this;
  }
  MPI_Op get() const { return op_; }

 private:
  MPI_Op op_ = MPI_SUM;
};

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_MPI_UTIL_H_
