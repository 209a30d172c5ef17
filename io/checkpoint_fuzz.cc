// Fuzz target: the checkpoint reader (CheckpointDir::load_latest) on a
// checkpoint file altered at random: the fuzzer's bytes are the file
// (its corpus starts from a checkpoint of FuzzState's values, written by
// io/checkpoint_fuzz_seed.cc). Properties: the load either reads exactly
// the saved values, or throws distconv::Error of kind kIo (damaged) or
// kShapeMismatch (a manifest that reads as another network's) with every
// replicated entry unchanged; nothing else (no crash, no other exception,
// no read past an array, no allocation beyond the file's size).
#include <mpi.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "distconv/error.h"
#include "io/checkpoint.h"
#include "io/checkpoint_fuzz_state.h"
#include "tests/fuzz_input.h"

namespace {

std::string& dir() {
  static std::string d;
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  std::atexit([] { MPI_Finalize(); });
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(tmp ? tmp : "/tmp") + "/ckpt_fuzz.XXXXXX";
  dir() = mkdtemp(pattern.data()) ? pattern : "/tmp";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using distconv::Error;
  using distconv::ErrorKind;
  namespace io = distconv::io;
  {
    std::ofstream out(dir() + "/step-00000042.h5",
                      std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
  }
  io::FuzzState loaded(false);
  const io::FuzzState before(false), saved(true);
  io::CheckpointState state = loaded.state();
  try {
    const auto step =
        io::CheckpointDir(MPI_COMM_SELF, dir()).load_latest(state);
    DISTCONV_FUZZ_CHECK(step.has_value() && *step == 42);
    DISTCONV_FUZZ_CHECK(loaded == saved);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kIo && e.kind() != ErrorKind::kShapeMismatch) {
      std::fprintf(stderr, "%s\n", e.what());
    }
    DISTCONV_FUZZ_CHECK(e.kind() == ErrorKind::kIo ||
                        e.kind() == ErrorKind::kShapeMismatch);
    DISTCONV_FUZZ_CHECK(loaded.w == before.w &&
                        loaded.momentum == before.momentum &&
                        loaded.step == before.step && loaded.rng == before.rng);
  }
  return 0;
}
