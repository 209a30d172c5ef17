// Fuzz target: the benchdnn descriptor parser on arbitrary text, for each
// problem kind (the first byte picks it). Properties: it accepts or throws
// distconv::Error(kInvalidArgument), nothing else; an accepted problem
// writes a canonical form (to_string does not throw) that parses back to
// the same problem, and whose own canonical form is itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include "distconv/error.h"
#include "perf/conv_problem.h"
#include "tests/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using distconv::ConvProblem;
  using distconv::Error;
  using distconv::ErrorKind;
  using distconv::ProblemKind;
  if (size == 0) return 0;
  const auto kind = static_cast<ProblemKind>(data[0] % 5);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  ConvProblem p;
  try {
    p = distconv::parse_conv_problem(text, kind);
  } catch (const Error& e) {
    DISTCONV_FUZZ_CHECK(e.kind() == ErrorKind::kInvalidArgument);
    return 0;
  }
  const std::string canonical = distconv::to_string(p);
  const ConvProblem back = distconv::parse_conv_problem(canonical, kind);
  DISTCONV_FUZZ_CHECK(back.kind == p.kind);
  DISTCONV_FUZZ_CHECK(back.name == p.name);
  DISTCONV_FUZZ_CHECK(back.src_shape == p.src_shape);
  DISTCONV_FUZZ_CHECK(back.desc.dst_shape(back.src_shape) ==
                      p.desc.dst_shape(p.src_shape));
  DISTCONV_FUZZ_CHECK(distconv::to_string(back) == canonical);
  return 0;
}
