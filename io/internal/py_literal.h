// Internal: the Python literal a .npy header holds, parsed as NumPy's
// np.load parses it: Python 3.11's ast.literal_eval of the header text (for
// format versions 1.0 and 2.0 after NumPy's _filter_header, which drops an
// "L" after a number). So a header parses here exactly when np.load's
// literal_eval succeeds, to the same value:
//
//   PyLiteral d = parse_py_literal("{'descr': '<f4', 'shape': (2, 3), }", {});
//   d.kind == PyLiteral::Kind::kDict;  d.items: key, value, key, value
//
// What literal_eval takes: strings and bytes (single, double and triple
// quotes; prefixes r, u, b, rb; escapes, adjacent literals joined),
// numbers (decimal, 0x, 0o, 0b, underscores, floats, imaginary), True,
// False, None, ..., tuples, lists, sets, set(), dicts, one unary + or -
// on a number, a real number plus or minus an imaginary one; between
// tokens blanks, comments, line continuations and, inside brackets, line
// breaks. Everything else (names, calls, operators, f-strings, unhashable
// dict keys or set members) fails, as it does in Python. One thing Python
// takes is refused: the \N{NAME} escape (it needs Unicode's name table).
#ifndef DISTCONV_IO_INTERNAL_PY_LITERAL_H_
#define DISTCONV_IO_INTERNAL_PY_LITERAL_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace distconv::io::internal {

struct PyLiteral {
  enum class Kind {
    kStr,
    kBytes,
    kInt,
    kBool,
    kFloat,
    kComplex,
    kNone,
    kEllipsis,
    kTuple,
    kList,
    kSet,
    kDict,
  };
  Kind kind = Kind::kNone;
  // kStr: the characters, UTF-8 encoded (a latin-1 header's bytes 0x80 and
  // up as their code points); kBytes: the bytes.
  std::string text;
  // kInt: the value when |value| < 2^62 (fits), else fits is false; kBool:
  // value is 0 or 1.
  std::int64_t value = 0;
  bool fits = true;
  // kTuple, kList, kSet: the elements; kDict: key, value, key, value, ...
  // in the order written (a later equal key replaces an earlier one).
  std::vector<PyLiteral> items;
};

// Why a header is not a Python literal (literal_eval's SyntaxError or
// ValueError, or a TypeError for an unhashable key).
class PyLiteralError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LongSuffix {
  kKept,     // format 3.0: "2L" is a syntax error
  kDropped,  // formats 1.0 and 2.0: NumPy drops an "L" after a number
};

// `source`: the header as characters, one byte each for latin-1 (formats
// 1.0 and 2.0), UTF-8 for format 3.0 (already checked to be UTF-8).
PyLiteral parse_py_literal(const std::string& source, LongSuffix suffix);

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_PY_LITERAL_H_
