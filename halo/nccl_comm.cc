#include "halo/nccl_comm.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <utility>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/cuda_check.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

void check_nccl(ncclResult_t code, const char* call) {
  require(code == ncclSuccess, ErrorKind::kDevice, call,
          " failed: ", ncclGetErrorString(code));
}

void require_distinct_gpus(MPI_Comm comm, const char* what) {
  char mine[16] = {};
  run_collectively(comm, [&] {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop;
    check_cuda(cudaGetDeviceProperties(&prop, device),
               "cudaGetDeviceProperties");
    std::memcpy(mine, prop.uuid.bytes, sizeof(mine));
  });
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<char> all(16 * static_cast<size_t>(size));
  check_mpi(MPI_Allgather(mine, 16, MPI_CHAR, all.data(), 16, MPI_CHAR, comm),
            "MPI_Allgather");
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      require(std::memcmp(&all[16 * a], &all[16 * b], 16) != 0,
              ErrorKind::kUnsupported, what,
              " needs one GPU per rank, and ranks ", a, " and ", b,
              " share one; use kHostStaged");
    }
  }
}

ncclComm_t make_nccl_comm(MPI_Comm comm) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  ncclUniqueId id;
  run_collectively(comm, [&] {
    if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  });
  check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm), "MPI_Bcast");
  ncclComm_t nccl = nullptr;
  try {
    run_collectively(comm, [&] {
      check_nccl(ncclCommInitRank(&nccl, size, id, rank), "ncclCommInitRank");
    });
  } catch (...) {
    // Made here but not on some other rank: abort (local, unlike destroy).
    if (nccl != nullptr) ncclCommAbort(nccl);
    throw;
  }
  return nccl;
}

NcclComm::NcclComm(MPI_Comm comm, ncclComm_t given) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int fits = 0;
  if (given != nullptr) {
    int count = 0, user_rank = 0;
    fits = ncclCommCount(given, &count) == ncclSuccess &&
           ncclCommUserRank(given, &user_rank) == ncclSuccess &&
           count == size && user_rank == rank;
  }
  int all_fit = 0;
  check_mpi(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce");
  if (all_fit) {
    comm_ = given;
    return;
  }
  comm_ = make_nccl_comm(comm);
  owned_ = true;
}

NcclComm::~NcclComm() {
  if (owned_ && comm_ != nullptr) ncclCommDestroy(comm_);
}

NcclComm::NcclComm(NcclComm&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)),
      owned_(std::exchange(other.owned_, false)) {}

}  // namespace distconv::internal
