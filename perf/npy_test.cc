#include "perf/npy.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "distconv/error.h"
#include "gtest/gtest.h"

namespace distconv {
namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.is_open()) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The header dictionary, without the padding and the final '\n', checking
// the magic, the version, the length and the alignment on the way.
std::string header_dict(const std::string& file) {
  EXPECT_GE(file.size(), 10u);
  EXPECT_EQ(file.substr(0, 6), std::string("\x93NUMPY", 6));
  EXPECT_EQ(file[6], '\x01');  // version 1.0
  EXPECT_EQ(file[7], '\x00');
  const size_t length = static_cast<unsigned char>(file[8]) |
                        static_cast<unsigned char>(file[9]) << 8;
  EXPECT_EQ((10 + length) % 64, 0u) << length;
  EXPECT_LE(10 + length, file.size());
  const std::string header = file.substr(10, length);
  EXPECT_EQ(header.back(), '\n');
  const size_t end = header.find_last_not_of(" \n");
  EXPECT_EQ(header.find_first_not_of(' ', end + 1), length - 1);
  return header.substr(0, end + 1);
}

// Where the data starts: after the magic, version, length and header.
size_t data_offset(const std::string& file) {
  return 10 + (static_cast<unsigned char>(file[8]) |
               static_cast<unsigned char>(file[9]) << 8);
}

// `value`'s bytes, least significant first.
template <typename T>
std::string little_endian(T value) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static_assert(sizeof(T) == sizeof(Bits), "T must have 4 or 8 bytes");
  Bits bits;
  std::memcpy(&bits, &value, sizeof(T));
  std::string out;
  for (size_t b = 0; b < sizeof(T); ++b) {
    out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

TEST(Npy, FloatMatrix) {
  const std::string path = temp_path("matrix.npy");
  const std::vector<float> values = {0.0f, 1.5f, -2.0f, 3.25f, 1e-30f, 7.0f};
  write_npy(path, Shape{2, 3}, values.data());
  const std::string file = read_bytes(path);
  EXPECT_EQ(header_dict(file),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  const size_t offset = data_offset(file);
  EXPECT_EQ(offset, 128u);  // as NumPy writes it
  ASSERT_EQ(file.size(), offset + values.size() * sizeof(float));
  std::string data;
  for (float v : values) data += little_endian(v);
  EXPECT_EQ(file.substr(offset), data);
  // 0.0f, then 1.5f = 0x3fc00000.
  EXPECT_EQ(file.substr(offset, 8), std::string("\0\0\0\0\0\0\xc0\x3f", 8));
}

TEST(Npy, DoubleVector) {
  const std::string path = temp_path("vector.npy");
  const std::vector<double> values = {1.0, -0.5, 1e300, 4.0, 5.0};
  write_npy(path, Shape{5}, values.data());
  const std::string file = read_bytes(path);
  EXPECT_EQ(header_dict(file),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }");
  const size_t offset = data_offset(file);
  ASSERT_EQ(file.size(), offset + values.size() * sizeof(double));
  std::string data;
  for (double v : values) data += little_endian(v);
  EXPECT_EQ(file.substr(offset), data);
  // 1.0 = 0x3ff0000000000000.
  EXPECT_EQ(file.substr(offset, 8), std::string("\0\0\0\0\0\0\xf0\x3f", 8));
}

TEST(Npy, ShapesAndSizes) {
  const std::string path = temp_path("shapes.npy");
  const std::vector<float> big(3 * 5 * 7 * 11 * 13 * 17, 2.0f);
  write_npy(path, Shape{3 * 5 * 7, 11, 13, 17, 1}, big.data());
  std::string file = read_bytes(path);
  EXPECT_EQ(header_dict(file),
            "{'descr': '<f4', 'fortran_order': False, "
            "'shape': (105, 11, 13, 17, 1), }");
  EXPECT_EQ(file.size(), data_offset(file) + big.size() * 4);
  EXPECT_EQ(file.substr(file.size() - 4), little_endian(2.0f));

  const float scalar = 42.0f;
  write_npy(path, Shape{}, &scalar);  // replaces the larger file
  file = read_bytes(path);
  EXPECT_EQ(header_dict(file),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }");
  EXPECT_EQ(file.size(), data_offset(file) + 4);
  EXPECT_EQ(file.substr(data_offset(file)), little_endian(42.0f));

  write_npy(path, Shape{0, 4}, static_cast<const float*>(nullptr));
  file = read_bytes(path);
  EXPECT_EQ(header_dict(file),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }");
  EXPECT_EQ(file.size(), data_offset(file));
}

std::string error_of(const std::string& path, const Shape& shape,
                     const float* data) {
  try {
    write_npy(path, shape, data);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(Npy, ErrorsNameThePath) {
  const float values[4] = {};
  const std::string missing = temp_path("no_such_dir/x.npy");
  EXPECT_EQ(
      error_of(missing, Shape{4}, values),
      "distconv: invalid argument: cannot open " + missing + " for writing");
  const std::string path = temp_path("bad.npy");
  EXPECT_EQ(error_of(path, Shape{2, -1}, values),
            "distconv: invalid argument: cannot write " + path +
                ": shape 2x-1 has a negative extent");
  EXPECT_EQ(error_of(path, Shape{4}, nullptr),
            "distconv: invalid argument: cannot write " + path +
                ": no data for shape 4");
  // A device where every write fails for lack of space.
  if (access("/dev/full", W_OK) == 0) {
    EXPECT_EQ(error_of("/dev/full", Shape{4}, values),
              "distconv: invalid argument: cannot write /dev/full");
  }
}

}  // namespace
}  // namespace distconv
