// Internal: a file's bytes checked as raw bytes, before any parser reads
// them (checkpoints: io/checkpoint.h). The hash of bytes [from, to) is a
// sum over 8-byte words of a mix of each word's index and value (the last
// word padded with zeros), so ranks can hash parts of the file and add
// them: every rank reads its share of 1 MiB blocks.
//
//   std::string head = read_prefix(comm, "ckpt.h5", 4096);   // rank 0's
//   std::uint64_t h = file_hash(comm, "ckpt.h5", 4096, size);
#ifndef DISTCONV_IO_INTERNAL_FILE_HASH_H_
#define DISTCONV_IO_INTERNAL_FILE_HASH_H_

#include <mpi.h>

#include <cstdint>
#include <string>

namespace distconv::io::internal {

// Collective: the file's first `bytes` bytes (fewer if it is shorter) as
// rank 0 reads them, on every rank; Error(kIo) on every rank if it cannot
// be read.
std::string read_prefix(MPI_Comm comm, const std::string& path,
                        std::size_t bytes);
// Collective: the file's size as rank 0 sees it, on every rank.
long long file_size(MPI_Comm comm, const std::string& path);
// Collective: the hash of bytes [from, to) of the file, on every rank;
// Error(kIo) on every rank if some rank cannot read its part.
std::uint64_t file_hash(MPI_Comm comm, const std::string& path, long long from,
                        long long to);
// The same hash of bytes in memory (a range of its own).
std::uint64_t bytes_hash(const std::string& data);

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_FILE_HASH_H_
