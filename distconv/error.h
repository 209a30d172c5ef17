// distconv::Error: the one exception type of the library.
//
// Every function that can fail on bad input throws `Error` with a kind and a
// message that names the offending values, e.g.
//
//   throw Error(ErrorKind::kGridMismatch,
//               "grid 2x3 needs 6 ranks, communicator has 4");
//
// Collective operations validate from global information before any
// communication, so every rank throws the same error together and none is
// left waiting inside a collective.
#ifndef DISTCONV_ERROR_H_
#define DISTCONV_ERROR_H_

#include <sstream>
#include <stdexcept>
#include <string>

namespace distconv {

enum class ErrorKind {
  kInvalidArgument,  // a value out of range or inconsistent with another
  kShapeMismatch,    // tensors, plans or views that do not fit together
  kGridMismatch,     // process grid vs. communicator, or ranks disagreeing
  kUnsupported,      // a valid request this build or backend cannot do
  kState,            // call order violated (e.g. wait() without start())
  kMpi,              // an MPI call returned an error code
  kDevice,           // a CUDA, cuDNN or NCCL call failed (GPU builds)
  kIo,               // a file that cannot be opened, read or written, or
                     // whose contents are not what was asked for
};

const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace internal {
// Builds a message from streamable parts: str("grid ", g, " has ", n).
template <typename... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace internal

// Throws Error(kind, message built from parts) when `condition` is false.
template <typename... Parts>
void require(bool condition, ErrorKind kind, const Parts&... parts) {
  if (!condition) throw Error(kind, internal::str(parts...));
}

}  // namespace distconv

#endif  // DISTCONV_ERROR_H_
