// Internal helpers of H5File: owned HDF5 identifiers, HDF5 return codes
// turned into Error(kIo) with HDF5's own message, and element types.
#ifndef DISTCONV_IO_INTERNAL_H5_UTIL_H_
#define DISTCONV_IO_INTERNAL_H5_UTIL_H_

#include <hdf5.h>

#include <string>
#include <utility>

#include "io/element_type.h"

namespace distconv::io::internal {

// An HDF5 identifier closed with its kind's close function (H5Fclose,
// H5Dclose, ...) on destruction; negative: none.
class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer close) : id_(id), close_(close) {}
  Hid(Hid&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
  Hid& operator=(Hid&& o) noexcept;
  ~Hid() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; returns the close function's result (0 when none).
  herr_t reset();

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// While alive, HDF5 prints nothing on errors (its messages go into ours).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// HDF5's innermost messages of the current error stack, or "".
std::string h5_error_text();
// Throws Error(kIo, what + ": " + HDF5's message) when `status` < 0.
void check_h5(long long status, const std::string& what);
// `id` owned with `close`, or Error(kIo) like check_h5.
Hid checked(hid_t id, Hid::Closer close, const std::string& what);

// The HDF5 type of `type` in memory and in new datasets: H5T_NATIVE_FLOAT,
// ... (not owned), or for bfloat16 a type of its own (owned): 2 bytes,
// fp32's sign bit, exponent and bias, and 7 mantissa bits.
Hid h5_memory_type(ElementType type);
// The ElementType of a dataset's stored type, or false when distconv has
// none for it (its description in *what).
bool element_type_of(hid_t stored, ElementType* type, std::string* what);

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_H5_UTIL_H_
