// Fuzz target: the .npy header parser on arbitrary bytes (a file's first
// bytes). Properties: it accepts or throws distconv::Error(kIo), nothing
// else (no crash, no read past the bytes, no other exception); an accepted
// header's data start lies within the header it measured; the header
// encoded for the parsed shape and type parses back to them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "distconv/error.h"
#include "io/npy_header.h"
#include "tests/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using distconv::Error;
  using distconv::ErrorKind;
  namespace io = distconv::io;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.size() >= io::kNpyPreambleSize) {
    try {
      // At least magic, version and length field (10 bytes in 1.0).
      const std::size_t n = io::npy_header_size(bytes, "fuzz.npy");
      DISTCONV_FUZZ_CHECK(n >= 10);
    } catch (const Error& e) {
      DISTCONV_FUZZ_CHECK(e.kind() == ErrorKind::kIo);
    }
  }
  io::NpyHeader header;
  try {
    header = io::parse_npy_header(bytes, "fuzz.npy");
  } catch (const Error& e) {
    DISTCONV_FUZZ_CHECK(e.kind() == ErrorKind::kIo);
    return 0;
  }
  DISTCONV_FUZZ_CHECK(header.data_offset <= bytes.size());
  const std::string again = io::encode_npy_header(header.shape, header.type);
  const io::NpyHeader back = io::parse_npy_header(again, "fuzz.npy");
  DISTCONV_FUZZ_CHECK(back.shape == header.shape);
  DISTCONV_FUZZ_CHECK(back.type == header.type);
  DISTCONV_FUZZ_CHECK(back.data_offset == again.size());
  return 0;
}
