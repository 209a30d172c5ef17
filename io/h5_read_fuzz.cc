// Fuzz target: the HDF5 tensor reader's checks (H5File::read): a dataset
// of a drawn shape and element type, with a "distconv_order" attribute of
// a drawn kind and value (or none), read into a tensor of a drawn shape
// with a drawn window (H5Window) and offset. Property: the read succeeds,
// with the dataset's values, exactly when this file's own statement of
// the rules says it must (the window rules, the attribute absent or the
// string "NCHW" / "NCDHW", float32 data); otherwise it throws
// distconv::Error of the kind the rules name. Nothing else: no crash, no
// other exception, no read outside the dataset.
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "distconv/dist_tensor.h"
#include "distconv/error.h"
#include "io/h5_file.h"
#include "tests/fuzz_input.h"

namespace {

using distconv::Index;
using distconv::Shape;

std::string& path() {
  static std::string p;
  return p;
}

enum class Attribute { kNone, kFixed, kVariable, kInteger, kArray, kFloat };

struct Case {
  Shape stored, tensor, offset;
  distconv::io::H5Window window = distconv::io::H5Window::kWhole;
  int type = 0;  // 0 float32, 1 float64, 2 int32, 3 uint8
  Attribute attribute = Attribute::kNone;
  std::string text;  // the attribute's characters (kFixed, kVariable)
};

Case draw(distconv::testing::FuzzInput& in) {
  Case c;
  const int n = static_cast<int>(in.pick(4, 5));
  c.stored = Shape::filled(n, 1);
  c.tensor = Shape::filled(n, 1);
  c.offset = Shape::filled(n, 0);
  for (int d = 0; d < n; ++d) {
    c.stored[d] = in.pick(1, 4);
    c.tensor[d] = std::max<Index>(1, c.stored[d] - in.pick(-1, 2));
    c.offset[d] = in.pick(0, 2);
  }
  c.window = static_cast<distconv::io::H5Window>(in.pick(0, 2));
  c.type = static_cast<int>(in.pick(0, 3));
  c.attribute = static_cast<Attribute>(in.pick(0, 5));
  const char letters[] = "NCDHW\0x";
  const Index length = in.pick(0, 7);
  for (Index i = 0; i < length; ++i) c.text += letters[in.pick(0, 6)];
  if (in.pick(0, 1) == 0 && c.attribute == Attribute::kFixed) {
    c.text = n == 5 ? "NCDHW" : "NCHW";  // often the right one
  }
  return c;
}

float value_at(const Shape& i, const Shape& shape) {
  return static_cast<float>(distconv::linear_index(i, shape) % 97) + 0.5f;
}

// Writes the case's file with HDF5's own calls (any type, any attribute).
void write_file(const Case& c) {
  const hid_t file =
      H5Fcreate(path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[5];
  for (int d = 0; d < c.stored.ndims(); ++d) dims[d] = c.stored[d];
  const hid_t space = H5Screate_simple(c.stored.ndims(), dims, nullptr);
  const hid_t types[] = {H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE, H5T_NATIVE_INT32,
                         H5T_NATIVE_UINT8};
  const hid_t dset = H5Dcreate2(file, "x", types[c.type], space, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT);
  std::vector<float> values(static_cast<std::size_t>(c.stored.volume()));
  for (Index k = 0; k < c.stored.volume(); ++k) {
    values[static_cast<std::size_t>(k)] =
        value_at(distconv::unravel(k, c.stored), c.stored);
  }
  H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
           values.data());
  const hid_t scalar = H5Screate(H5S_SCALAR);
  if (c.attribute == Attribute::kFixed || c.attribute == Attribute::kArray) {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, std::max<std::size_t>(1, c.text.size()));
    const hsize_t two = 2;
    const hid_t s = c.attribute == Attribute::kArray
                        ? H5Screate_simple(1, &two, nullptr)
                        : H5Scopy(scalar);
    const hid_t a =
        H5Acreate2(dset, "distconv_order", t, s, H5P_DEFAULT, H5P_DEFAULT);
    std::string padded = c.text + c.text;
    padded.resize(2 * std::max<std::size_t>(1, c.text.size()), '\0');
    H5Awrite(a, t, padded.data());
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
  } else if (c.attribute == Attribute::kVariable) {
    const hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    const hid_t a =
        H5Acreate2(dset, "distconv_order", t, scalar, H5P_DEFAULT, H5P_DEFAULT);
    const char* text = c.text.c_str();
    H5Awrite(a, t, &text);
    H5Aclose(a);
    H5Tclose(t);
  } else if (c.attribute != Attribute::kNone) {
    const bool integer = c.attribute == Attribute::kInteger;
    const hid_t a = H5Acreate2(dset, "distconv_order",
                               integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE,
                               scalar, H5P_DEFAULT, H5P_DEFAULT);
    const std::int64_t i = 4;
    const double f = 4.0;
    H5Awrite(a, integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE,
             integer ? static_cast<const void*>(&i) : &f);
    H5Aclose(a);
  }
  H5Sclose(scalar);
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
}

// The rules (io/h5_file.h): the error kind a read must throw, or none.
std::optional<distconv::ErrorKind> expected(const Case& c) {
  using distconv::ErrorKind;
  using distconv::io::H5Window;
  const int n = c.stored.ndims();
  const Shape offset =
      c.window == H5Window::kWhole ? Shape::filled(n, 0) : c.offset;
  bool fits = true;
  for (int d = 0; d < n; ++d) {
    fits = fits && offset[d] + c.tensor[d] <= c.stored[d];
  }
  if (c.window == H5Window::kWhole && c.stored != c.tensor) {
    return ErrorKind::kIo;
  }
  if (c.window == H5Window::kSamples) {
    for (int d = 1; d < n; ++d) {
      if (c.stored[d] != c.tensor[d]) return ErrorKind::kIo;
    }
    for (int d = 1; d < n; ++d) {
      if (offset[d] != 0) return ErrorKind::kInvalidArgument;
    }
  }
  if (!fits) return ErrorKind::kIo;
  const std::string order = n == 5 ? "NCDHW" : "NCHW";
  const std::string text = c.text.substr(0, c.text.find('\0'));
  if (c.attribute != Attribute::kNone &&
      !(c.attribute == Attribute::kFixed && text == order)) {
    return ErrorKind::kIo;
  }
  if (c.type != 0) return ErrorKind::kIo;
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  std::atexit([] { MPI_Finalize(); });
  const char* tmp = std::getenv("TEST_TMPDIR");
  path() = std::string(tmp ? tmp : "/tmp") + "/h5_read_fuzz." +
           std::to_string(getpid()) + ".h5";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  namespace io = distconv::io;
  distconv::testing::FuzzInput in(data, size);
  const Case c = draw(in);
  write_file(c);
  const distconv::ProcessGrid grid(MPI_COMM_SELF,
                                   Shape::filled(c.tensor.ndims(), 1));
  distconv::DistTensor<float> t(
      grid,
      distconv::HaloLayout(distconv::Distribution(c.tensor, grid.shape())));
  io::H5ReadOptions options;
  options.window = c.window;
  if (c.window != io::H5Window::kWhole) options.offset = c.offset;
  const std::optional<distconv::ErrorKind> want = expected(c);
  try {
    io::H5File f(MPI_COMM_SELF, path(), io::H5Mode::kRead);
    f.read("x", t, options);
  } catch (const distconv::Error& e) {
    if (!want || *want != e.kind()) std::fprintf(stderr, "%s\n", e.what());
    DISTCONV_FUZZ_CHECK(want && *want == e.kind());
    return 0;
  }
  DISTCONV_FUZZ_CHECK(!want);
  const Shape offset = options.offset.ndims() == 0
                           ? Shape::filled(c.tensor.ndims(), 0)
                           : options.offset;
  bool same = true;
  t.interior().for_each([&](const Shape& i, const float& v) {
    same = same && v == value_at(i + offset, c.stored);
  });
  DISTCONV_FUZZ_CHECK(same);
  return 0;
}
