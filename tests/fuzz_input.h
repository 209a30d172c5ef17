// FuzzInput: small values drawn from a fuzzer's bytes, for targets that
// build structured input (shapes, grids, halo widths) rather than parse the
// bytes. Past the end every draw is the range's lowest value, so every
// input, however short, describes one case.
//
//   FuzzInput in(data, size);
//   const int ndims = in.pick(2, 4);      // in [2, 4]
//   const bool periodic = in.pick(0, 1);
#ifndef DISTCONV_TESTS_FUZZ_INPUT_H_
#define DISTCONV_TESTS_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace distconv::testing {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size)
      : data_(data), size_(size) {}

  // A value in [lo, hi] (hi - lo < 256) from the next byte.
  long long pick(long long lo, long long hi) {
    if (pos_ >= size_ || hi <= lo) return lo;
    return lo + data_[pos_++] % (hi - lo + 1);
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// A failed property: prints it and aborts (a finding for the fuzzer, a
// failure for the corpus replay).
#define DISTCONV_FUZZ_CHECK(condition)                                         \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                                \
      std::abort();                                                            \
    }                                                                          \
  } while (false)

}  // namespace distconv::testing

#endif  // DISTCONV_TESTS_FUZZ_INPUT_H_
