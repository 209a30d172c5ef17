#include "distconv/internal/mpi_util.h"

#include <string>

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

}  // namespace distconv::internal
