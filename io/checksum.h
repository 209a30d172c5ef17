// Checksums of arrays that do not depend on how the array is split: the
// sum (mod 2^64) over its elements of a hash of (global C-order index,
// value bits). Each rank sums its own shard and the sums add up, so the
// same tensor gives the same checksum on every grid, and a changed value
// (or a value moved to another index) changes it.
//
//   std::uint64_t a = io::checksum(values.data(), shape);  // whole array
//   std::uint64_t b = io::checksum(tensor);   // collective over its grid
#ifndef DISTCONV_IO_CHECKSUM_H_
#define DISTCONV_IO_CHECKSUM_H_

#include <cstdint>

#include "distconv/dist_tensor.h"
#include "distconv/shape.h"

namespace distconv::io {

template <typename T>
std::uint64_t checksum(const T* data, const Shape& shape);
template <typename T>
std::uint64_t checksum(const DistTensor<T>& tensor);  // collective

}  // namespace distconv::io

#endif  // DISTCONV_IO_CHECKSUM_H_
