// Writes the checkpoint fuzz target's corpus (io/checkpoint_fuzz.cc) into
// a directory: a checkpoint of FuzzState's values, and copies of it cut
// short, with a bit of data, of the manifest, of its size in the header,
// of its first line and of HDF5's superblock flipped, and with the step in
// its header changed.
//   checkpoint_fuzz_seed DIR
#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "io/checkpoint.h"
#include "io/checkpoint_fuzz_state.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  namespace io = distconv::io;
  namespace fs = std::filesystem;
  const std::string out = argv[1], work = out + "/.work";
  {
    io::FuzzState saved(true);
    io::CheckpointDir(MPI_COMM_SELF, work).save(42, saved.state());
  }
  std::ifstream in(work + "/step-00000042.h5", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});
  fs::remove_all(work);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(out + "/" + name, std::ios::binary) << bytes;
  };
  write("good", good);
  write("cut_half", good.substr(0, good.size() / 2));
  write("cut_end", good.substr(0, good.size() - 7));
  std::string flipped = good;
  const float w3 = 1.75f;  // w[3]
  flipped[flipped.find(std::string(reinterpret_cast<const char*>(&w3), 4))] ^=
      1;
  write("data_bit", flipped);
  std::string manifest = good;
  manifest[manifest.find("fuzz: w 37")] = 'F';
  write("manifest_byte", manifest);
  std::string superblock = good;  // HDF5's, after the 4 KiB header
  superblock[4096 + 20] ^= 0x40;
  write("superblock_bit", superblock);
  std::string header = good;
  header[header.find("bytes ") + 6] ^= 1;
  write("header_size", header);
  std::string first_line = good;  // "diStconv checkpoint 2"
  first_line[2] ^= 0x20;
  write("header_first_line", first_line);
  std::string step = good;
  step[step.find("step 42") + 6] = '3';
  write("step_renamed", step);
  MPI_Finalize();
  return 0;
}
