// For io:npy_header_numpy_test: parses the header of each file named on
// the command line (io/npy_header.h) and prints one line per file,
//   PATH<TAB>OK<TAB>SHAPE<TAB>TYPE<TAB>DATA_OFFSET   (SHAPE: 2x3, "()" 0-D)
//   PATH<TAB>REFUSED<TAB>MESSAGE
// so that a script can compare each verdict with np.load's.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "distconv/error.h"
#include "io/npy_header.h"

int main(int argc, char** argv) {
  namespace io = distconv::io;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    try {
      const io::NpyHeader h = io::parse_npy_header(bytes, argv[i]);
      std::printf("%s\tOK\t%s\t%s\t%zu\n", argv[i],
                  h.shape.ndims() ? h.shape.to_string().c_str() : "()",
                  io::to_string(h.type), h.data_offset);
    } catch (const distconv::Error& e) {
      std::string message = e.what();
      for (char& c : message) {
        if (c == '\n' || c == '\t') c = ' ';
      }
      std::printf("%s\tREFUSED\t%s\n", argv[i], message.c_str());
    }
  }
  return 0;
}
