#include "io/npy_header.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "distconv/error.h"
#include "io/internal/py_literal.h"

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

using internal::PyLiteral;
using Kind = internal::PyLiteral::Kind;

// NumPy's spellings of distconv's types that distconv reads (np.dtype
// takes more: "1f4", "f+4", ...): a byte order '<', '=' or '|' or none
// ('>' too for one byte), then kind and size or a one-letter code, or a
// name.
bool descr_type(const std::string& descr, ElementType* type) {
  struct Spelling {
    const char* body;
    ElementType type;
  };
  static const Spelling kSpellings[] = {
      {"f4", ElementType::kFloat32},      {"f", ElementType::kFloat32},
      {"float32", ElementType::kFloat32}, {"f8", ElementType::kFloat64},
      {"d", ElementType::kFloat64},       {"float64", ElementType::kFloat64},
      {"i8", ElementType::kInt64},        {"q", ElementType::kInt64},
      {"l", ElementType::kInt64},         {"int64", ElementType::kInt64},
      {"u1", ElementType::kUint8},        {"B", ElementType::kUint8},
      {"uint8", ElementType::kUint8},
  };
  const char order = descr.empty() ? '\0' : descr[0];
  const bool ordered =
      order == '<' || order == '=' || order == '|' || order == '>';
  const std::string body = ordered ? descr.substr(1) : descr;
  for (const Spelling& s : kSpellings) {
    if (body != s.body) continue;
    // Names take no byte order; '>' only where there is one byte.
    if (ordered && body.size() > 2) return false;
    if (order == '>' && s.type != ElementType::kUint8) return false;
    *type = s.type;
    return true;
  }
  return false;
}

// Characters in a UTF-8 string (format 3.0), or -1 where it is not UTF-8
// (Python's strict decoder: no overlong forms, surrogates or values past
// U+10FFFF).
long long utf8_length(const std::string& s) {
  long long n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int more = 0;
    unsigned long code = 0, least = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      more = 1, code = c & 0x1F, least = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      more = 2, code = c & 0x0F, least = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      more = 3, code = c & 0x07, least = 0x10000;
    } else {
      return -1;
    }
    if (i + more >= s.size()) return -1;
    for (int k = 1; k <= more; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return -1;
      code = code << 6 | (d & 0x3F);
    }
    if (code < least || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return -1;
    }
    i += static_cast<std::size_t>(more) + 1;
  }
  return n;
}

// The dictionary's value of `key` (the last one given, as in Python).
const PyLiteral& value_of(const PyLiteral& dict, const char* key) {
  const PyLiteral* found = nullptr;
  for (std::size_t i = 0; i < dict.items.size(); i += 2) {
    if (dict.items[i].text == key) found = &dict.items[i + 1];
  }
  return *found;
}

// NumPy's checks of the dictionary (numpy.lib.format._read_array_header),
// then distconv's own (its types, C order, extents it can hold).
NpyHeader read_dictionary(const PyLiteral& d, const std::string& path) {
  if (d.kind != Kind::kDict) bad(path, "the header is not a dictionary");
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < d.items.size(); i += 2) {
    const PyLiteral& k = d.items[i];
    if (k.kind != Kind::kStr) bad(path, "a key of the header is not a string");
    if (std::find(keys.begin(), keys.end(), k.text) == keys.end()) {
      keys.push_back(k.text);
    }
  }
  std::sort(keys.begin(), keys.end());
  const std::vector<std::string> expected = {"descr", "fortran_order", "shape"};
  if (keys != expected) {
    std::string have;
    for (const std::string& k : keys)
      have += (have.empty() ? "'" : ", '") + k + "'";
    bad(path, "the header's keys are " + (have.empty() ? "none" : have) +
                  ", not 'descr', 'fortran_order' and 'shape'");
  }
  NpyHeader h;
  const PyLiteral& shape = value_of(d, "shape");
  if (shape.kind != Kind::kTuple) bad(path, "'shape' is not a tuple");
  for (const PyLiteral& e : shape.items) {
    if (e.kind != Kind::kInt && e.kind != Kind::kBool) {
      bad(path, "'shape' holds something other than integers");
    }
  }
  const PyLiteral& fortran = value_of(d, "fortran_order");
  if (fortran.kind != Kind::kBool) bad(path, "'fortran_order' is not a bool");
  const PyLiteral& descr = value_of(d, "descr");
  if (descr.kind == Kind::kTuple || descr.kind == Kind::kList) {
    bad(path,
        "a structured or subarray element type (distconv reads <f4, "
        "<f8, <i8 and |u1)");
  }
  if (descr.kind != Kind::kStr) bad(path, "'descr' is not a string");
  if (!descr_type(descr.text, &h.type)) {
    bad(path, "element type '" + descr.text +
                  "' (distconv reads <f4, <f8, <i8 and |u1, little-endian)");
  }
  if (fortran.value != 0) bad(path, "Fortran order (distconv reads C order)");
  if (static_cast<int>(shape.items.size()) > kMaxDims) {
    bad(path, "shape has " + std::to_string(shape.items.size()) +
                  " dimensions (at most " + std::to_string(kMaxDims) + ")");
  }
  h.shape = Shape::filled(static_cast<int>(shape.items.size()), 0);
  Index volume = 1;
  for (std::size_t i = 0; i < shape.items.size(); ++i) {
    const PyLiteral& e = shape.items[i];
    if (e.value < 0) {
      bad(path,
          "a negative extent in 'shape' (np.load takes it as 'the "
          "rest'; distconv needs the extents)");
    }
    if (!e.fits || e.value > (Index{1} << 50) ||
        (e.value > 0 && volume > (Index{1} << 50) / e.value)) {
      bad(path, "an extent of 'shape' is too large");
    }
    volume *= e.value;
    h.shape[static_cast<int>(i)] = e.value;
  }
  return h;
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
  const int minor = static_cast<int>(byte(kMagicSize + 1));
  if ((major == 1 || major == 2 || major == 3) && minor != 0) {
    bad(path, "format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " (1.0, 2.0 or 3.0 read)");
  }
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
  const int major = static_cast<unsigned char>(bytes[kMagicSize]);
  const std::size_t dict_start = major == 1 ? kMagicSize + 4 : kMagicSize + 6;
  const std::string dict = bytes.substr(dict_start, size - dict_start);
  // NumPy decodes formats 1.0 and 2.0 as latin-1, 3.0 as UTF-8, and
  // refuses headers of more than 10000 characters.
  const long long length =
      major == 3 ? utf8_length(dict) : static_cast<long long>(dict.size());
  if (length < 0) bad(path, "its format 3.0 header is not UTF-8");
  if (length > 10000) {
    bad(path, "its header is " + std::to_string(length) +
                  " characters long, more than NumPy's 10000");
  }
  internal::PyLiteral d;
  try {
    d = internal::parse_py_literal(dict, major == 3
                                             ? internal::LongSuffix::kKept
                                             : internal::LongSuffix::kDropped);
  } catch (const internal::PyLiteralError& e) {
    bad(path, std::string("the header is not a Python literal: ") + e.what());
  }
  NpyHeader h = read_dictionary(d, path);
  h.data_offset = size;
  return h;
}

}  // namespace distconv::io
