#include "distconv/error.h"

namespace distconv {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kShapeMismatch: return "shape mismatch";
    case ErrorKind::kGridMismatch: return "grid mismatch";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kState: return "invalid state";
    case ErrorKind::kMpi: return "MPI error";
    case ErrorKind::kDevice: return "device error";
    case ErrorKind::kIo: return "I/O error";
  }
  return "unknown error";
}

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(std::string("distconv: ") + to_string(kind) + ": " +
                         message),
      kind_(kind) {}

}  // namespace distconv
