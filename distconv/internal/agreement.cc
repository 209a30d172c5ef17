#include "distconv/internal/agreement.h"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::internal {

namespace {

// FNV-1a, 64 bits, over a string and a separator.
void mix(std::uint64_t& h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0x1f;
  h *= 1099511628211ull;
}

// The object and fields as one string, NUL-separated, for the gather.
std::string serialize(const Fingerprint& f) {
  std::string out = f.object();
  out.push_back('\0');
  for (const auto& [name, value] : f.fields()) {
    out += name;
    out.push_back('\0');
    out += value;
    out.push_back('\0');
  }
  return out;
}

std::vector<std::string> split(const char* data, int size) {
  std::vector<std::string> parts;
  std::string current;
  for (int i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(data[i]);
    }
  }
  return parts;
}

// Every rank's serialized fingerprint (the mismatch path only).
std::vector<std::vector<std::string>> gather_all(MPI_Comm comm,
                                                 const std::string& mine) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size), offsets(size, 0);
  check_mpi(
      MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm),
      "MPI_Allgather");
  for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::vector<char> all(static_cast<size_t>(offsets.back() + lengths.back()));
  check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(),
                           lengths.data(), offsets.data(), MPI_CHAR, comm),
            "MPI_Allgatherv");
  std::vector<std::vector<std::string>> out(size);
  for (int r = 0; r < size; ++r) {
    out[r] = split(all.data() + offsets[r], lengths[r]);
  }
  return out;
}

// Entry i of a rank's parts, or a marker when it has fewer.
std::string entry(const std::vector<std::string>& parts, size_t i) {
  return i < parts.size() ? parts[i] : std::string("(nothing)");
}

[[noreturn]] void report(const std::vector<std::vector<std::string>>& all) {
  // parts: object, then name, value pairs. The first index where a rank
  // differs from rank 0, and the lowest such rank.
  size_t longest = 0;
  for (const auto& parts : all) longest = std::max(longest, parts.size());
  for (size_t i = 0; i < longest; ++i) {
    for (size_t r = 1; r < all.size(); ++r) {
      if (entry(all[r], i) == entry(all[0], i)) continue;
      if (i == 0) {
        throw Error(ErrorKind::kGridMismatch,
                    "ranks disagree on the object they build: " +
                        entry(all[0], 0) + " on rank 0, " + entry(all[r], 0) +
                        " on rank " + std::to_string(r));
      }
      // Name the field (the pair's name; for a differing name, both).
      const size_t name = i - (i - 1) % 2;
      std::string field0 = entry(all[0], name), field_r = entry(all[r], name);
      std::string v0 = entry(all[0], name + 1), vr = entry(all[r], name + 1);
      std::string what =
          field0 == field_r
              ? field0 + " " + v0 + " on rank 0, " + vr
              : field0 + " " + v0 + " on rank 0, " + field_r + " " + vr;
      throw Error(ErrorKind::kGridMismatch,
                  "ranks disagree on the " + entry(all[0], 0) + ": " + what +
                      " on rank " + std::to_string(r));
    }
  }
  throw Error(ErrorKind::kGridMismatch,
              "ranks disagree on the " + entry(all[0], 0) +
                  " (the same fields, a hash collision)");
}

}  // namespace

Fingerprint& Fingerprint::add(const std::string& field,
                              const std::string& value) {
  fields_.emplace_back(field, value);
  return *this;
}

Fingerprint& Fingerprint::add(const std::string& field, double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return add(field, out.str());
}

Fingerprint& Fingerprint::add(const std::string& name,
                              const Distribution& dist) {
  add(name + " shape", dist.global_shape());
  add(name + " grid", dist.grid_shape());
  std::ostringstream split;
  for (int d = 0; d < dist.ndims(); ++d) {
    const BlockPartition& p = dist.partition(d);
    if (p.parts() < 2) continue;
    split << (split.tellp() > 0 ? ", " : "") << "dimension " << d << ": ";
    for (int i = 0; i < p.parts(); ++i) split << (i ? "/" : "") << p.size(i);
  }
  return add(name + " split", split.tellp() > 0 ? split.str() : "none");
}

Fingerprint& Fingerprint::add(const std::string& name,
                              const HaloLayout& layout) {
  add(name, layout.distribution());
  std::ostringstream widths, boundaries;
  for (int p = 0; p < layout.num_parts(); ++p) {
    const HaloWidths& w = layout.widths(p);
    widths << (p ? ", " : "") << w.lower << "/" << w.upper;
  }
  for (int d = 0; d < layout.ndims(); ++d) {
    boundaries << (d ? "," : "")
               << (layout.boundary(d) == Boundary::kPeriodic ? "periodic"
                                                             : "open");
  }
  add(name + " halo widths", widths.str());
  add(name + " boundaries", boundaries.str());
  return add(name + " storage order",
             layout.storage_order() == StorageOrder::kChannelsLast
                 ? "channels-last"
                 : "channels-first");
}

std::uint64_t Fingerprint::hash() const {
  std::uint64_t h = 1469598103934665603ull;
  mix(h, object_);
  for (const auto& [name, value] : fields_) {
    mix(h, name);
    mix(h, value);
  }
  return h;
}

void agree(MPI_Comm comm, const Fingerprint& fingerprint) {
  const std::uint64_t h = fingerprint.hash();
  std::uint64_t range[2] = {h, ~h};  // max of h, and of ~h: ~min of h
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_UINT64_T, MPI_MAX, comm),
            "MPI_Allreduce");
  if (range[0] == ~range[1]) return;
  report(gather_all(comm, serialize(fingerprint)));
}

template <>
const char* element_name<float>() {
  return "float32";
}
template <>
const char* element_name<double>() {
  return "float64";
}
template <>
const char* element_name<bf16>() {
  return "bfloat16";
}
template <>
const char* element_name<fp16>() {
  return "float16";
}
template <>
const char* element_name<std::int32_t>() {
  return "int32";
}
template <>
const char* element_name<std::int64_t>() {
  return "int64";
}
template <>
const char* element_name<std::uint8_t>() {
  return "uint8";
}

}  // namespace distconv::internal
