#include "distconv/internal/mpi_util.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "distconv/element_types.h"
#include "distconv/error.h"

namespace distconv::internal {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorKind::kMpi,
              std::string(call) + " failed: " + std::string(text, length));
}

namespace {

template <typename T>
void add_narrow(void* in, void* inout, int* count, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = float(a[i]) + float(b[i]);
}

}  // namespace

template <typename T>
MPI_Op make_narrow_sum() {
  MPI_Op op = MPI_OP_NULL;
  check_mpi(MPI_Op_create(&add_narrow<T>, /*commute=*/1, &op), "MPI_Op_create");
  return op;
}
#define DISTCONV_INSTANTIATE(T) template MPI_Op make_narrow_sum<T>();
DISTCONV_FOR_EACH_NARROW_TYPE(DISTCONV_INSTANTIATE)
#undef DISTCONV_INSTANTIATE

void wait_all(std::vector<MPI_Request>& requests) {
  // Cleared on the way out, thrown or not; the capacity stays for the
  // next exchange.
  struct Clear {
    std::vector<MPI_Request>& list;
    ~Clear() { list.clear(); }
  } clear{requests};
  wait_all(static_cast<int>(requests.size()), requests.data());
}

std::vector<std::string> allgather_bytes(MPI_Comm comm,
                                         const std::string& mine) {
  int ranks = 0;
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  std::vector<int> lengths(ranks), offsets(ranks);
  // MPI counts are ints: a length past that is -1, and every rank throws.
  const int length = mine.size() <= static_cast<size_t>(INT_MAX)
                         ? static_cast<int>(mine.size())
                         : -1;
  check_mpi(
      MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm),
      "MPI_Allgather");
  std::int64_t sum = 0;
  for (int r = 0; r < ranks; ++r) {
    offsets[r] = static_cast<int>(std::min<std::int64_t>(sum, INT_MAX));
    sum += lengths[r] < 0 ? std::int64_t{INT_MAX} + 1 : lengths[r];
  }
  require(sum <= INT_MAX, ErrorKind::kInvalidArgument, "allgather of ", sum,
          " bytes: MPI counts stop at ", INT_MAX);
  const int total = static_cast<int>(sum);
  std::string all(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(),
                           lengths.data(), offsets.data(), MPI_BYTE, comm),
            "MPI_Allgatherv");
  std::vector<std::string> each(ranks);
  for (int r = 0; r < ranks; ++r) each[r] = all.substr(offsets[r], lengths[r]);
  return each;
}

void wait_all(int count, MPI_Request* requests) {
  std::vector<MPI_Status> statuses(static_cast<size_t>(count));
  const int code = MPI_Waitall(count, requests, statuses.data());
  if (code != MPI_ERR_IN_STATUS) return check_mpi(code, "MPI_Waitall");
  for (const MPI_Status& s : statuses) {
    if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) {
      check_mpi(s.MPI_ERROR, "MPI_Waitall");
    }
  }
  check_mpi(code, "MPI_Waitall");
}

OwnedComm::OwnedComm(MPI_Comm comm, int color, int key) {
  check_mpi(MPI_Comm_split(comm, color, key, &comm_), "MPI_Comm_split");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
            "MPI_Comm_set_errhandler");
}

OwnedComm::~OwnedComm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void run_collectively(MPI_Comm comm, const std::function<void()>& step) {
  if (comm == MPI_COMM_NULL) return step();
  std::optional<Error> mine;
  try {
    step();
  } catch (const Error& e) {
    mine = e;
  } catch (const std::bad_alloc& e) {
    mine = Error(ErrorKind::kInvalidArgument,
                 std::string("cannot allocate memory (") + e.what() + ")");
  }
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int first = mine ? rank : size;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm),
            "MPI_Allreduce");
  if (first == size) return;
  // The failing rank's kind and message, without Error's own prefix.
  long long head[2] = {0, 0};
  std::string message;
  if (rank == first) {
    const std::string prefix =
        std::string("distconv: ") + to_string(mine->kind()) + ": ";
    message = std::string(mine->what()).substr(prefix.size());
    head[0] = static_cast<long long>(mine->kind());
    head[1] = static_cast<long long>(message.size());
  }
  check_mpi(MPI_Bcast(head, 2, MPI_LONG_LONG, first, comm), "MPI_Bcast");
  message.resize(static_cast<size_t>(head[1]));
  check_mpi(MPI_Bcast(message.data(), static_cast<int>(head[1]), MPI_CHAR,
                      first, comm),
            "MPI_Bcast");
  throw Error(static_cast<ErrorKind>(head[0]),
              message + " (on rank " + std::to_string(first) + ")");
}

}  // namespace distconv::internal
