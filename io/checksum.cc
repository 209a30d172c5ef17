#include "io/checksum.h"

#include <mpi.h>

#include <cstring>

#include "distconv/internal/mpi_util.h"

namespace distconv::io {
namespace {

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
std::uint64_t cell(Index index, const T& value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return mix(bits +
             mix(static_cast<std::uint64_t>(index) + 0x9e3779b97f4a7c15ULL));
}

}  // namespace

template <typename T>
std::uint64_t checksum(const T* data, const Shape& shape) {
  std::uint64_t sum = 0;
  const Index n = shape.volume();
  for (Index i = 0; i < n; ++i) sum += cell(i, data[i]);
  return sum;
}

template <typename T>
std::uint64_t checksum(const DistTensor<T>& tensor) {
  const Shape global = tensor.global_shape();
  const Shape lower = tensor.shard().lower;
  std::uint64_t sum = 0;
  tensor.interior().for_each([&](const Shape& i, const T& v) {
    sum += cell(linear_index(i + lower, global), v);
  });
  distconv::internal::check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM,
                    tensor.grid().comm()),
      "MPI_Allreduce");
  return sum;
}

template std::uint64_t checksum<float>(const float*, const Shape&);
template std::uint64_t checksum<double>(const double*, const Shape&);
template std::uint64_t checksum<std::int64_t>(const std::int64_t*,
                                              const Shape&);
template std::uint64_t checksum<std::uint8_t>(const std::uint8_t*,
                                              const Shape&);
template std::uint64_t checksum<float>(const DistTensor<float>&);
template std::uint64_t checksum<double>(const DistTensor<double>&);
template std::uint64_t checksum<bf16>(const DistTensor<bf16>&);

}  // namespace distconv::io
