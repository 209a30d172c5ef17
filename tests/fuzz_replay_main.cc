// main() of the fuzz targets' regression tests: runs every file under the
// directories (or the files) given on the command line through
// LLVMFuzzerTestOneInput, in name order (after LLVMFuzzerInitialize, where
// the target defines it). A failing property aborts, as in
// the fuzzer; an empty corpus is an error (the test would prove nothing).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);
// Optional, as in libFuzzer: run once before the first input.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc,
                                                          char*** argv);

namespace {

std::vector<std::filesystem::path> inputs(const char* arg) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  if (fs::is_directory(arg)) {
    for (const auto& e : fs::recursive_directory_iterator(arg)) {
      if (e.is_regular_file()) out.push_back(e.path());
    }
  } else {
    out.push_back(arg);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& path : inputs(argv[i])) {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
      }
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(
          reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::printf("replayed %zu inputs\n", ran);
  return ran > 0 ? 0 : 1;
}
