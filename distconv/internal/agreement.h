// Internal: the check that every rank of a communicator describes a
// collective object alike (the same layer, shapes, distribution, options
// and element type), made once when the object is built, before any of
// its own collectives. Ranks that describe a layer differently would
// otherwise exchange messages of sizes their peers did not plan: a hang,
// a truncation error, or a silent wrong result.
//
//   Fingerprint f("convolution");
//   f.add("kernel", desc.kernel).add("stride", desc.stride);
//   agree(comm, f);
//   // on a mismatch, on every rank: Error(kGridMismatch, "ranks disagree
//   // on the convolution: kernel 3x3 on rank 0, 5x5 on rank 1")
//
// The agreement is one allreduce of two 64-bit integers (a hash of the
// fields); only on a mismatch are the fields themselves gathered, to name
// the first field that differs and two ranks that disagree on it.
#ifndef DISTCONV_INTERNAL_AGREEMENT_H_
#define DISTCONV_INTERNAL_AGREEMENT_H_

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "distconv/bf16.h"
#include "distconv/distribution.h"
#include "distconv/halo_layout.h"
#include "distconv/shape.h"

namespace distconv::internal {

class Fingerprint {
 public:
  explicit Fingerprint(std::string object) : object_(std::move(object)) {}

  const std::string& object() const { return object_; }
  const std::vector<std::pair<std::string, std::string>>& fields() const {
    return fields_;
  }

  Fingerprint& add(const std::string& field, const std::string& value);
  Fingerprint& add(const std::string& field, const char* value) {
    return add(field, std::string(value));
  }
  Fingerprint& add(const std::string& field, const Shape& value) {
    return add(field, value.to_string());
  }
  Fingerprint& add(const std::string& field, Index value) {
    return add(field, std::to_string(value));
  }
  Fingerprint& add(const std::string& field, int value) {
    return add(field, std::to_string(value));
  }
  Fingerprint& add(const std::string& field, double value);
  Fingerprint& add(const std::string& field, bool value) {
    return add(field, value ? "yes" : "no");
  }
  // `name` shape, grid, and the sizes of the parts of each split
  // dimension ("dimension 2: 16/16").
  Fingerprint& add(const std::string& name, const Distribution& dist);
  // The distribution, then every part's halo widths, the boundaries and
  // the storage order.
  Fingerprint& add(const std::string& name, const HaloLayout& layout);

  std::uint64_t hash() const;

 private:
  std::string object_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Collective over `comm`: returns when every rank passed the same
// fingerprint, else throws the same Error(kGridMismatch) on every rank.
void agree(MPI_Comm comm, const Fingerprint& fingerprint);

// "float32", "float64", ... for the element-type field.
template <typename T>
const char* element_name();
template <>
const char* element_name<float>();
template <>
const char* element_name<double>();
template <>
const char* element_name<bf16>();
template <>
const char* element_name<fp16>();
template <>
const char* element_name<std::int32_t>();
template <>
const char* element_name<std::int64_t>();
template <>
const char* element_name<std::uint8_t>();

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_AGREEMENT_H_
