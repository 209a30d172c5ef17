// Internal: Python's tokenizer as it reads one expression (ast.parse in
// "eval" mode), for parse_py_literal (io/internal/py_literal.h): strings
// and numbers with their values, names, operators, the line's end; blanks,
// comments and line continuations skipped, and line breaks inside
// brackets (open() and close() tell it the depth). Throws PyLiteralError
// where Python's tokenizer raises.
#ifndef DISTCONV_IO_INTERNAL_PY_TOKENS_H_
#define DISTCONV_IO_INTERNAL_PY_TOKENS_H_

#include <memory>
#include <string>

#include "io/internal/py_literal.h"

namespace distconv::io::internal {

struct PyToken {
  enum class Kind { kString, kNumber, kName, kOp, kNewline, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;      // kName, kOp ("(", ",", "...", ...)
  PyLiteral value;       // kString (kStr or kBytes), kNumber
  bool fstring = false;  // kString: an f-string (not a literal)
};

class PyTokenizer {
 public:
  PyTokenizer(const std::string& source, LongSuffix suffix);
  ~PyTokenizer();
  PyTokenizer(const PyTokenizer&) = delete;
  PyTokenizer& operator=(const PyTokenizer&) = delete;
  PyToken next();
  void open();   // after an opening bracket (at most 200 deep)
  void close();  // after a closing one

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace distconv::io::internal

#endif  // DISTCONV_IO_INTERNAL_PY_TOKENS_H_
