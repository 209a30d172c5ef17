#include "io/npy_header.h"

#include <cctype>
#include <cstdint>
#include <vector>

#include "distconv/error.h"

namespace distconv::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

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

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::kIo,
              path + " is not a .npy file distconv reads: " + why);
}

// The value after 'key': in the header dictionary, from its first
// character on.
std::size_t find_value(const std::string& dict, const char* key,
                       const std::string& path) {
  const std::string quoted = std::string("'") + key + "'";
  std::size_t at = dict.find(quoted);
  if (at == std::string::npos) bad(path, std::string("no '") + key + "' key");
  at = dict.find(':', at + quoted.size());
  if (at == std::string::npos) bad(path, std::string("no value for ") + key);
  ++at;
  while (at < dict.size() && dict[at] == ' ') ++at;
  return at;
}

ElementType parse_descr(const std::string& dict, const std::string& path) {
  const std::size_t at = find_value(dict, "descr", path);
  const std::size_t end = dict.find('\'', at + 1);
  if (at >= dict.size() || dict[at] != '\'' || end == std::string::npos) {
    bad(path, "'descr' is not a string");
  }
  const std::string descr = dict.substr(at + 1, end - at - 1);
  for (ElementType t : {ElementType::kFloat32, ElementType::kFloat64,
                        ElementType::kInt64, ElementType::kUint8}) {
    const std::string want = npy_descr(t);
    if (descr == want) return t;
    if (t == ElementType::kUint8 && descr == "<u1") return t;
  }
  bad(path, "element type '" + descr +
                "' (distconv reads <f4, <f8, <i8 and |u1, little-endian)");
}

Shape parse_shape(const std::string& dict, const std::string& path) {
  std::size_t at = find_value(dict, "shape", path);
  if (at >= dict.size() || dict[at] != '(') bad(path, "'shape' is not a tuple");
  const std::size_t end = dict.find(')', at);
  if (end == std::string::npos) bad(path, "'shape' is not a tuple");
  Shape shape;
  std::vector<Index> extents;
  for (std::size_t i = at + 1; i < end;) {
    if (dict[i] == ' ' || dict[i] == ',') {
      ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(dict[i]))) {
      bad(path, "'shape' holds something other than integers");
    }
    Index v = 0;
    for (; i < end && std::isdigit(static_cast<unsigned char>(dict[i])); ++i) {
      if (v > (Index{1} << 50)) bad(path, "an extent of 'shape' is too large");
      v = 10 * v + (dict[i] - '0');
    }
    extents.push_back(v);
  }
  if (static_cast<int>(extents.size()) > kMaxDims) {
    bad(path, "shape has " + std::to_string(extents.size()) +
                  " dimensions (at most " + std::to_string(kMaxDims) + ")");
  }
  shape = Shape::filled(static_cast<int>(extents.size()), 0);
  for (std::size_t d = 0; d < extents.size(); ++d) {
    shape[static_cast<int>(d)] = extents[d];
  }
  return shape;
}

}  // namespace

std::string encode_npy_header(const Shape& shape, ElementType type,
                              std::size_t alignment) {
  require(*npy_descr(type) != '\0', ErrorKind::kUnsupported,
          ".npy files cannot hold ", to_string(type),
          " (NumPy has no such type): use HDF5");
  std::string dict =
      std::string("{'descr': '") + npy_descr(type) +
      "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  const std::size_t unpadded = kMagicSize + 4 + dict.size() + 1;  // + '\n'
  const std::size_t padded = (unpadded + alignment - 1) / alignment * alignment;
  dict.append(padded - unpadded, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';  // major version
  out += '\x00';  // minor version
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

std::size_t npy_header_size(const std::string& preamble,
                            const std::string& path) {
  if (preamble.size() < kMagicSize + 4 ||
      preamble.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
    bad(path, "it does not start with the .npy magic string");
  }
  const auto byte = [&](std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned char>(preamble[i]));
  };
  const int major = static_cast<int>(byte(kMagicSize));
  if (major == 1) return kMagicSize + 4 + (byte(8) | byte(9) << 8);
  if (major == 2 || major == 3) {
    if (preamble.size() < kNpyPreambleSize) bad(path, "the file is truncated");
    return kMagicSize + 6 +
           (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
  }
  bad(path, "format version " + std::to_string(major) + " (1, 2 or 3 read)");
}

NpyHeader parse_npy_header(const std::string& bytes, const std::string& path) {
  const std::size_t size = npy_header_size(bytes, path);
  if (bytes.size() < size) bad(path, "the file is truncated in its header");
  const std::size_t dict_start =
      static_cast<unsigned char>(bytes[kMagicSize]) == 1 ? kMagicSize + 4
                                                         : kMagicSize + 6;
  const std::string dict = bytes.substr(dict_start, size - dict_start);
  NpyHeader h;
  h.type = parse_descr(dict, path);
  const std::size_t fortran = find_value(dict, "fortran_order", path);
  if (dict.compare(fortran, 5, "False") != 0) {
    bad(path, "Fortran order (distconv reads C order)");
  }
  h.shape = parse_shape(dict, path);
  h.data_offset = size;
  return h;
}

}  // namespace distconv::io
