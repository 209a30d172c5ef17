// Command-line helpers of the small benchmark programs (halo_bench,
// redistribute_bench, io_bench, ...) and the examples: `--key=value`
// arguments, shapes written "1x16x2048x2048" (or with commas),
// comma-separated lists, and whether --help was asked for.
//
//   if (const char* v = option_value(arg, "--shape=")) shape = parse_dims(v);
#ifndef DISTCONV_PERF_CLI_ARGS_H_
#define DISTCONV_PERF_CLI_ARGS_H_

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "distconv/error.h"
#include "distconv/shape.h"

namespace distconv {

// The text after `key` (e.g. "--shape=") when `arg` starts with it, else
// null.
inline const char* option_value(const std::string& arg, const char* key) {
  const size_t n = std::strlen(key);
  return arg.compare(0, n, key) == 0 ? arg.c_str() + n : nullptr;
}

// 1 to kMaxDims non-negative integers separated by 'x' or ','; throws
// kInvalidArgument naming `text` otherwise.
inline Shape parse_dims(const std::string& text) {
  std::vector<Index> v;
  size_t pos = 0;
  while (true) {
    const size_t end = text.find_first_of("x,", pos);
    const std::string part = text.substr(pos, end - pos);
    require(!part.empty() && part.size() <= 15 &&
                part.find_first_not_of("0123456789") == std::string::npos,
            ErrorKind::kInvalidArgument, "cannot parse shape '", text, "'");
    v.push_back(std::stoll(part));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  require(v.size() <= kMaxDims, ErrorKind::kInvalidArgument, "shape '", text,
          "' has more than ", kMaxDims, " dimensions");
  Shape s = Shape::filled(static_cast<int>(v.size()), 0);
  for (size_t d = 0; d < v.size(); ++d) s[static_cast<int>(d)] = v[d];
  return s;
}

// Whether one of the arguments is --help; if so rank 0 of MPI_COMM_WORLD
// (MPI initialised) prints `usage`, the program's options with their
// defaults, and the program then finalizes MPI and exits 0:
//   if (help_printed(argc, argv, kUsage)) { MPI_Finalize(); return 0; }
inline bool help_printed(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") != 0) continue;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fputs(usage, stdout);
    return true;
  }
  return false;
}

// The comma-separated items of `text`, in order ("a,,b": "a", "", "b").
inline std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= text.size();) {
    const size_t end = std::min(text.find(',', pos), text.size());
    items.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

}  // namespace distconv

#endif  // DISTCONV_PERF_CLI_ARGS_H_
