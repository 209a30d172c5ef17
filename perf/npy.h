// Writes arrays as NumPy .npy files (format version 1.0), to inspect or
// compare benchmark and test tensors with NumPy.
//
//   std::vector<float> x(2 * 3);
//   write_npy("/tmp/x.npy", Shape{2, 3}, x.data());
//   // python3 -c "import numpy; print(numpy.load('/tmp/x.npy').shape)"
//   // (2, 3)
//
// The data is read in C order (row-major, last dimension fastest), the
// layout of a contiguous distconv tensor, and written little-endian ('<f4'
// or '<f8') whatever the host's byte order. The header is padded with spaces
// and ends in '\n' so that the data starts at a multiple of 64 bytes.
#ifndef DISTCONV_PERF_NPY_H_
#define DISTCONV_PERF_NPY_H_

#include <string>

#include "distconv/shape.h"

namespace distconv {

// Writes shape.volume() values from `data` (which may be null only when the
// volume is 0) to `path`, replacing any file there. Throws
// Error(kInvalidArgument) naming `path` when the shape has a negative extent
// or the file cannot be opened or written.
void write_npy(const std::string& path, const Shape& shape, const float* data);
void write_npy(const std::string& path, const Shape& shape, const double* data);

}  // namespace distconv

#endif  // DISTCONV_PERF_NPY_H_
