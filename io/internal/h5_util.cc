#include "io/internal/h5_util.h"

#include <algorithm>
#include <vector>

#include "distconv/error.h"

namespace distconv::io::internal {

Hid& Hid::operator=(Hid&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = std::exchange(o.id_, -1);
    close_ = o.close_;
  }
  return *this;
}

herr_t Hid::reset() {
  herr_t status = 0;
  if (id_ >= 0 && close_ != nullptr) {
    QuietErrors quiet;
    status = close_(id_);
  }
  id_ = -1;
  return status;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

namespace {

herr_t collect(unsigned, const H5E_error2_t* e, void* out) {
  if (e->desc != nullptr && e->desc[0] != '\0') {
    static_cast<std::vector<std::string>*>(out)->push_back(e->desc);
  }
  return 0;
}

}  // namespace

std::string h5_error_text() {
  // Walked from the API call inward: the last entry is the cause.
  std::vector<std::string> stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, &stack);
  if (stack.empty()) return "HDF5 gave no reason";
  if (stack.size() == 1) return stack[0];
  return stack.back() + " (" + stack.front() + ")";
}

void check_h5(long long status, const std::string& what) {
  if (status >= 0) return;
  const std::string why = h5_error_text();
  H5Eclear2(H5E_DEFAULT);
  throw Error(ErrorKind::kIo, what + ": " + why);
}

Hid checked(hid_t id, Hid::Closer close, const std::string& what) {
  check_h5(id, what);
  return Hid(id, close);
}

namespace {

// bfloat16's fields: sign at bit 15, 8 exponent bits from bit 7, 7
// mantissa bits from bit 0.
constexpr std::size_t kBf16Fields[5] = {15, 7, 8, 0, 7};

bool is_bf16(hid_t stored) {
  std::size_t f[5];
  return H5Tget_fields(stored, &f[0], &f[1], &f[2], &f[3], &f[4]) >= 0 &&
         std::equal(f, f + 5, kBf16Fields) && H5Tget_ebias(stored) == 127 &&
         H5Tget_precision(stored) == 16 && H5Tget_offset(stored) == 0;
}

Hid bf16_type() {
  const std::string what = "cannot make HDF5's bfloat16 type";
  Hid t = checked(H5Tcopy(H5T_NATIVE_FLOAT), H5Tclose, what);
  const std::size_t* f = kBf16Fields;
  check_h5(H5Tset_fields(t.get(), f[0], f[1], f[2], f[3], f[4]), what);
  check_h5(H5Tset_offset(t.get(), 0), what);
  check_h5(H5Tset_precision(t.get(), 16), what);
  check_h5(H5Tset_size(t.get(), 2), what);
  check_h5(H5Tset_ebias(t.get(), 127), what);
  return t;
}

}  // namespace

Hid h5_memory_type(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
      return Hid(H5T_NATIVE_FLOAT, nullptr);
    case ElementType::kFloat64:
      return Hid(H5T_NATIVE_DOUBLE, nullptr);
    case ElementType::kInt64:
      return Hid(H5T_NATIVE_INT64, nullptr);
    case ElementType::kUint8:
      return Hid(H5T_NATIVE_UINT8, nullptr);
    case ElementType::kBfloat16:
      return bf16_type();
  }
  return Hid();
}

bool element_type_of(hid_t stored, ElementType* type, std::string* what) {
  const H5T_class_t cls = H5Tget_class(stored);
  const size_t size = H5Tget_size(stored);
  if (cls == H5T_FLOAT && size == 2 && is_bf16(stored))
    *type = ElementType::kBfloat16;
  else if (cls == H5T_FLOAT && size == 4)
    *type = ElementType::kFloat32;
  else if (cls == H5T_FLOAT && size == 8)
    *type = ElementType::kFloat64;
  else if (cls == H5T_INTEGER && size == 8 && H5Tget_sign(stored) == H5T_SGN_2)
    *type = ElementType::kInt64;
  else if (cls == H5T_INTEGER && size == 1 &&
           H5Tget_sign(stored) == H5T_SGN_NONE)
    *type = ElementType::kUint8;
  else {
    const char* names[] = {"integer",         "float",     "time",
                           "string",          "bitfield",  "opaque",
                           "compound",        "reference", "enum",
                           "variable-length", "array"};
    *what = std::string(cls >= 0 && cls <= 10 ? names[cls] : "unknown") +
            " of " + std::to_string(size) + " bytes";
    return false;
  }
  return true;  // either byte order: HDF5 converts on reading
}

}  // namespace distconv::io::internal
