// The header of a NumPy .npy file: encoding and parsing, without I/O.
//
//   std::string h = encode_npy_header(Shape{2, 3}, ElementType::kFloat32);
//   NpyHeader p = parse_npy_header(h, "x.npy");   // {shape 2x3, float32, 64}
//
// Written headers are format version 1.0, padded with spaces and ending in
// '\n' so that the data starts at a multiple of 64 bytes (or of a larger
// alignment); the data is C order (row-major, the last dimension fastest)
// and little-endian.
//
// Parsing reads what np.load reads, as np.load reads it: versions 1.0, 2.0
// and 3.0 (latin-1 and UTF-8), headers of at most 10000 characters, the
// dictionary as Python's ast.literal_eval reads it (io/internal/
// py_literal.h: any quotes, comments, line breaks, number forms; a key
// given twice takes its last value; nothing after the dictionary), with
// exactly the keys 'descr', 'fortran_order' (a bool) and 'shape' (a tuple
// of integers). Of what np.load reads, distconv reads C order and its
// element types, spelled with byte order '<', '=', '|' or none and as
// kind and size ('f4', 'f8', 'i8', 'u1'), a one-letter code ('f', 'd', 'q',
// 'l', 'B') or a name ('float32', 'float64', 'int64', 'uint8'); and
// extents from 0 to 2^50 (np.load takes a negative one as "the rest").
// Anything else throws Error(kIo) naming the file and what is wrong with it.
#ifndef DISTCONV_IO_NPY_HEADER_H_
#define DISTCONV_IO_NPY_HEADER_H_

#include <cstddef>
#include <string>

#include "distconv/shape.h"
#include "io/element_type.h"

namespace distconv::io {

struct NpyHeader {
  Shape shape;
  ElementType type = ElementType::kFloat32;
  std::size_t data_offset = 0;  // bytes before the first element
};

// Bytes to read to be sure of holding a header (its length field included).
inline constexpr std::size_t kNpyPreambleSize = 12;

// `alignment` (a multiple of 64, at most 32768): where the data start.
// NumPy writes 64; 4096 puts large arrays on a page boundary.
std::string encode_npy_header(const Shape& shape, ElementType type,
                              std::size_t alignment = 64);
// `bytes`: the file's first bytes (at least the whole header; more is
// fine). Needs only the preamble to tell the header's length:
// npy_header_size(bytes) when bytes.size() >= kNpyPreambleSize.
NpyHeader parse_npy_header(const std::string& bytes, const std::string& path);
std::size_t npy_header_size(const std::string& preamble,
                            const std::string& path);

}  // namespace distconv::io

#endif  // DISTCONV_IO_NPY_HEADER_H_
