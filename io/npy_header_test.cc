#include "io/npy_header.h"

#include <gtest/gtest.h>

#include <string>

#include "distconv/error.h"

namespace distconv::io {
namespace {

TEST(NpyHeader, RoundTripsEveryTypeAndRank) {
  for (ElementType t : {ElementType::kFloat32, ElementType::kFloat64,
                        ElementType::kInt64, ElementType::kUint8}) {
    for (const Shape& s : {Shape{}, Shape{7}, Shape{2, 3},
                           Shape{1, 16, 512, 512}, Shape{2, 4, 0, 5, 6}}) {
      const std::string h = encode_npy_header(s, t);
      EXPECT_EQ(h.size() % 64, 0u);
      EXPECT_EQ(h.back(), '\n');
      const NpyHeader p = parse_npy_header(h + "data", "x.npy");
      EXPECT_EQ(p.shape, s);
      EXPECT_EQ(p.type, t);
      EXPECT_EQ(p.data_offset, h.size());
      EXPECT_EQ(npy_header_size(h.substr(0, kNpyPreambleSize), "x.npy"),
                h.size());
    }
  }
}

// NumPy has no bfloat16: refused by name.
TEST(NpyHeader, RefusesBfloat16) {
  try {
    encode_npy_header(Shape{2, 3}, ElementType::kBfloat16);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("cannot hold bfloat16"),
              std::string::npos)
        << e.what();
  }
}

TEST(NpyHeader, AlignsTheDataAsAsked) {
  const std::string h =
      encode_npy_header(Shape{1, 16, 512, 512}, ElementType::kFloat32, 4096);
  EXPECT_EQ(h.size(), 4096u);
  EXPECT_EQ(parse_npy_header(h, "x.npy").data_offset, 4096u);
  EXPECT_EQ(parse_npy_header(h, "x.npy").shape, (Shape{1, 16, 512, 512}));
}

TEST(NpyHeader, WritesWhatNumPyWrites) {
  // The first 128 bytes numpy.save writes for numpy.zeros((2, 3), '<f4').
  const std::string numpy =
      std::string("\x93NUMPY\x01\x00v\x00", 10) +
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
      std::string(58, ' ') + "\n";
  EXPECT_EQ(encode_npy_header(Shape{2, 3}, ElementType::kFloat32), numpy);
}

TEST(NpyHeader, ReadsVersionTwoAndOtherSpacing) {
  const std::string dict =
      "{'shape':(4,5),'fortran_order':False,'descr':'<i8'}\n";
  std::string h = std::string("\x93NUMPY\x02\x00", 8);
  h += static_cast<char>(dict.size());
  h += std::string(3, '\0');
  h += dict;
  const NpyHeader p = parse_npy_header(h, "v2.npy");
  EXPECT_EQ(p.shape, (Shape{4, 5}));
  EXPECT_EQ(p.type, ElementType::kInt64);
  EXPECT_EQ(p.data_offset, h.size());
}

void expect_io_error(const std::string& bytes, const std::string& contains) {
  try {
    parse_npy_header(bytes, "bad.npy");
    ADD_FAILURE() << "no error for " << contains;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(contains), std::string::npos)
        << e.what();
  }
}

TEST(NpyHeader, RefusesWhatItCannotRead) {
  const std::string good =
      encode_npy_header(Shape{2, 3}, ElementType::kFloat64);
  expect_io_error("PK\x03\x04 a zip file", "magic");
  expect_io_error("", "magic");
  expect_io_error(good.substr(0, 40), "truncated");
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f8"), 3, ">f8");
  expect_io_error(big_endian, "'>f8'");
  std::string complex = good;
  complex.replace(complex.find("<f8"), 3, "<c8");
  expect_io_error(complex, "'<c8'");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  expect_io_error(fortran, "Fortran order");
  std::string version = good;
  version[6] = '\x07';
  expect_io_error(version, "version 7");
  std::string shape = good;
  shape.replace(shape.find("(2, 3)"), 6, "(2, x)");
  expect_io_error(shape, "the name 'x'");
}

// A version 1.0 header around `dict`, padded as NumPy pads.
std::string v1(const std::string& dict) {
  std::string body = dict;
  const std::size_t unpadded = 10 + body.size() + 1;
  body.append((unpadded + 63) / 64 * 64 - unpadded, ' ');
  body += '\n';
  std::string h = std::string("\x93NUMPY\x01\x00", 8);
  h += static_cast<char>(body.size() & 0xff);
  h += static_cast<char>(body.size() >> 8);
  return h + body;
}

// What np.load refuses is refused: text after the dictionary (np.load:
// "Cannot parse header"), a key missing or one too many, values of the
// wrong kind, an unknown minor version, a header over 10000 characters.
TEST(NpyHeader, RefusesWhatNumPyRefuses) {
  const std::string keys = "'fortran_order': False, 'shape': (2, 3)";
  expect_io_error(v1("{'descr': '<f4', " + keys + ", } junk"), "literal");
  expect_io_error(v1("{'descr': '<f4', " + keys + "}}"), "literal");
  expect_io_error(v1("{'descr': '<f4', " + keys + "} # comment\n{}"),
                  "literal");
  expect_io_error(v1("{'descr': '<f4', 'shape': (2, 3)}"), "keys");
  expect_io_error(v1("{'descr': '<f4', " + keys + ", 'extra': 1}"), "keys");
  expect_io_error(v1("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"),
                  "fortran_order");
  expect_io_error(v1("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}"),
                  "'shape' is not a tuple");
  expect_io_error(v1("{'descr': '<f4', 'fortran_order': False, 'shape': 2}"),
                  "'shape' is not a tuple");
  expect_io_error(
      v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}"),
      "integers");
  std::string minor = v1("{'descr': '<f4', " + keys + "}");
  minor[7] = '\x01';
  expect_io_error(minor, "version 1.1");
  const std::string padding(10001, ' ');
  std::string long_header = std::string("\x93NUMPY\x02\x00", 8);
  const std::string dict = "{'descr': '<f4', " + keys + "}" + padding + "\n";
  for (int b = 0; b < 4; ++b) {
    long_header += static_cast<char>((dict.size() >> (8 * b)) & 0xff);
  }
  expect_io_error(long_header + dict, "10000");
}

// What np.load reads is read as np.load reads it: of a key given twice,
// the last value (Python's dict); Python's literal syntax (quotes,
// comments, line breaks, trailing commas, number forms); a Python 2 "L"
// in formats 1.0 and 2.0.
TEST(NpyHeader, ReadsWhatNumPyReads) {
  const auto parsed = [](const std::string& dict) {
    return parse_npy_header(v1(dict), "x.npy");
  };
  NpyHeader h = parsed(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (9,), "
      "'descr': '<f4', 'shape': (2, 3)}");
  EXPECT_EQ(h.type, ElementType::kFloat32);
  EXPECT_EQ(h.shape, (Shape{2, 3}));
  h = parsed(
      "{\"descr\": \"<\" 'i8', # the type\n 'fortran_order': (False),\n"
      " 'shape': (0x2, 1_0, +3,),}");
  EXPECT_EQ(h.type, ElementType::kInt64);
  EXPECT_EQ(h.shape, (Shape{2, 10, 3}));
  h = parsed("{'descr': '|u1', 'fortran_order': False, 'shape': (2L, 3L)}");
  EXPECT_EQ(h.shape, (Shape{2, 3}));
  h = parsed("{'descr': '<f4', 'fortran_order': False, 'shape': (True, 4)}");
  EXPECT_EQ(h.shape, (Shape{1, 4}));
}

}  // namespace
}  // namespace distconv::io
