// Internal: NCCL communicators for the code in GPU memory (the NCCL halo
// transport, the layers' gradient sums), made collectively over an MPI
// communicator, or a caller's borrowed where it spans the same ranks in
// the same order. Built only with --config=cuda.
//
//   NcclComm nccl(comm, options.nccl_comm);  // borrowed or made
//   ncclAllReduce(..., nccl.get(), stream);
#ifndef DISTCONV_HALO_NCCL_COMM_H_
#define DISTCONV_HALO_NCCL_COMM_H_

#include <mpi.h>
#include <nccl.h>

#include "distconv/bf16.h"

namespace distconv::internal {

// NCCL's type of elements of T: float, double, bf16 or fp16.
template <typename T>
ncclDataType_t nccl_type();
template <>
inline ncclDataType_t nccl_type<float>() {
  return ncclFloat32;
}
template <>
inline ncclDataType_t nccl_type<double>() {
  return ncclFloat64;
}
template <>
inline ncclDataType_t nccl_type<bf16>() {
  return ncclBfloat16;
}
template <>
inline ncclDataType_t nccl_type<fp16>() {
  return ncclFloat16;
}

// Turns a failed NCCL call into Error(kDevice) naming the call.
void check_nccl(ncclResult_t code, const char* call);

// Collective over `comm`: NCCL needs one GPU per rank; throws kUnsupported
// on every rank where two share one (`what` names the user in the
// message).
void require_distinct_gpus(MPI_Comm comm, const char* what);

// Collective over `comm`: a new communicator over its ranks.
ncclComm_t make_nccl_comm(MPI_Comm comm);

// A communicator over `comm`'s ranks: `given` where it has comm's size and
// this rank's rank in it (on every rank: decided collectively), else one
// made collectively and destroyed with the object. Move-only.
class NcclComm {
 public:
  NcclComm(MPI_Comm comm, ncclComm_t given);
  ~NcclComm();
  NcclComm(NcclComm&& other) noexcept;
  NcclComm& operator=(NcclComm&&) = delete;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
  bool owned_ = false;
};

}  // namespace distconv::internal

#endif  // DISTCONV_HALO_NCCL_COMM_H_
