#include "io/internal/file_hash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "distconv/error.h"
#include "distconv/internal/mpi_util.h"

namespace distconv::io::internal {
namespace {

using distconv::internal::check_mpi;
using distconv::internal::run_collectively;

constexpr long long kBlock = 1 << 20;  // bytes each rank reads at a time

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The sum over the words of `n` bytes at `p`, the first being word
// `first_word` of the hashed range.
std::uint64_t words_hash(const unsigned char* p, long long n,
                         long long first_word) {
  std::uint64_t sum = 0;
  for (long long at = 0; at < n; at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + at, static_cast<std::size_t>(std::min(8LL, n - at)));
    sum += mix(mix(static_cast<std::uint64_t>(first_word + at / 8)) ^ word);
  }
  return sum;
}

int rank_of(MPI_Comm comm) {
  int r = 0;
  check_mpi(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}

}  // namespace

std::string read_prefix(MPI_Comm comm, const std::string& path,
                        std::size_t bytes) {
  std::string head;
  run_collectively(comm, [&] {
    if (rank_of(comm) != 0) return;
    const int fd = ::open(path.c_str(), O_RDONLY);
    require(fd >= 0, ErrorKind::kIo, "cannot open ", path,
            " for reading: ", std::strerror(errno));
    head.resize(bytes);
    const ssize_t got = ::pread(fd, head.data(), bytes, 0);
    const int code = errno;
    ::close(fd);
    require(got >= 0, ErrorKind::kIo, "cannot read ", path, ": ",
            std::strerror(code));
    head.resize(static_cast<std::size_t>(got));
  });
  long long n = static_cast<long long>(head.size());
  check_mpi(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  head.resize(static_cast<std::size_t>(n));
  check_mpi(MPI_Bcast(head.data(), static_cast<int>(n), MPI_CHAR, 0, comm),
            "MPI_Bcast");
  return head;
}

long long file_size(MPI_Comm comm, const std::string& path) {
  long long size = 0;
  run_collectively(comm, [&] {
    if (rank_of(comm) != 0) return;
    struct stat s;
    require(::stat(path.c_str(), &s) == 0, ErrorKind::kIo, "cannot read ", path,
            ": ", std::strerror(errno));
    size = s.st_size;
  });
  check_mpi(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  return size;
}

std::uint64_t file_hash(MPI_Comm comm, const std::string& path, long long from,
                        long long to) {
  int rank = 0, ranks = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  std::uint64_t sum = 0;
  run_collectively(comm, [&] {
    const long long blocks = (to - from + kBlock - 1) / kBlock;
    if (blocks <= rank) return;
    const int fd = ::open(path.c_str(), O_RDONLY);
    require(fd >= 0, ErrorKind::kIo, "cannot open ", path,
            " for reading: ", std::strerror(errno));
    std::vector<unsigned char> buffer(static_cast<std::size_t>(kBlock));
    for (long long b = rank; b < blocks; b += ranks) {
      const long long at = from + b * kBlock;
      const long long n = std::min(kBlock, to - at);
      const ssize_t got =
          ::pread(fd, buffer.data(), static_cast<std::size_t>(n), at);
      if (got != n) {
        const int code = got < 0 ? errno : 0;
        ::close(fd);
        throw Error(ErrorKind::kIo, "cannot read " + path + ": " +
                                        (code ? std::strerror(code)
                                              : "it is shorter than it says"));
      }
      sum += words_hash(buffer.data(), n, (at - from) / 8);
    }
    ::close(fd);
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm),
            "MPI_Allreduce");
  return sum;
}

std::uint64_t bytes_hash(const std::string& data) {
  return words_hash(reinterpret_cast<const unsigned char*>(data.data()),
                    static_cast<long long>(data.size()), 0);
}

}  // namespace distconv::io::internal
