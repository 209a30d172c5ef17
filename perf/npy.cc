#include "perf/npy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "distconv/error.h"

namespace distconv {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kPreambleSize = kMagicSize + 2 + 2;  // + version + length
constexpr size_t kAlignment = 64;
constexpr Index kChunk = 1 << 14;  // values encoded per write

// "(2, 3)", "(5,)" or "()": a Python tuple.
std::string shape_tuple(const Shape& shape) {
  std::string out = "(";
  for (int d = 0; d < shape.ndims(); ++d) {
    if (d > 0) out += ", ";
    out += std::to_string(shape[d]);
  }
  if (shape.ndims() == 1) out += ",";
  return out + ")";
}

// Magic, version 1.0, header length and the header dictionary, padded so
// that the total is a multiple of kAlignment.
std::string npy_header(const Shape& shape, const char* descr) {
  std::string dict =
      std::string("{'descr': '") + descr +
      "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  const size_t unpadded = kPreambleSize + dict.size() + 1;  // + '\n'
  const size_t padded = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  dict.append(padded - unpadded, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';  // major version
  out += '\x00';  // minor version
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

// Writes `count` values little-endian, `Bits` being the unsigned integer of
// the same size as `T`.
template <typename T, typename Bits>
void write_little_endian(std::ostream& out, const T* data, Index count) {
  static_assert(sizeof(T) == sizeof(Bits), "Bits must have the size of T");
  std::vector<char> bytes(kChunk * sizeof(T));
  for (Index start = 0; start < count && out; start += kChunk) {
    const Index n = std::min(kChunk, count - start);
    for (Index i = 0; i < n; ++i) {
      Bits bits;
      std::memcpy(&bits, &data[start + i], sizeof(T));
      for (size_t b = 0; b < sizeof(T); ++b) {
        bytes[i * sizeof(T) + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
      }
    }
    out.write(bytes.data(), static_cast<std::streamsize>(n * sizeof(T)));
  }
}

template <typename T, typename Bits>
void write_npy_file(const std::string& path, const Shape& shape, const T* data,
                    const char* descr) {
  for (Index extent : shape) {
    require(extent >= 0, ErrorKind::kInvalidArgument, "cannot write ", path,
            ": shape ", shape, " has a negative extent");
  }
  const Index count = shape.volume();
  require(data != nullptr || count == 0, ErrorKind::kInvalidArgument,
          "cannot write ", path, ": no data for shape ", shape);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  require(out.is_open(), ErrorKind::kInvalidArgument, "cannot open ", path,
          " for writing");
  const std::string header = npy_header(shape, descr);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  write_little_endian<T, Bits>(out, data, count);
  out.close();
  require(!out.fail(), ErrorKind::kInvalidArgument, "cannot write ", path);
}

}  // namespace

void write_npy(const std::string& path, const Shape& shape, const float* data) {
  write_npy_file<float, std::uint32_t>(path, shape, data, "<f4");
}

void write_npy(const std::string& path, const Shape& shape,
               const double* data) {
  write_npy_file<double, std::uint64_t>(path, shape, data, "<f8");
}

}  // namespace distconv
