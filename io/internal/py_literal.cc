#include "io/internal/py_literal.h"

#include <cstddef>
#include <string>
#include <utility>

#include "io/internal/py_tokens.h"

namespace distconv::io::internal {
namespace {

[[noreturn]] void fail(const std::string& why) { throw PyLiteralError(why); }

// How an expression was written: literal_eval takes a sign only before a
// number written as such, and a sum only of such a (signed) real number
// and an imaginary one.
enum class Form { kConstant, kSigned, kOther };

struct Parsed {
  PyLiteral value;
  Form form = Form::kOther;
};

bool is_number(const PyLiteral& v) {
  return v.kind == PyLiteral::Kind::kInt || v.kind == PyLiteral::Kind::kFloat ||
         v.kind == PyLiteral::Kind::kComplex;
}

bool hashable(const PyLiteral& v) {
  switch (v.kind) {
    case PyLiteral::Kind::kList:
    case PyLiteral::Kind::kSet:
    case PyLiteral::Kind::kDict:
      return false;
    case PyLiteral::Kind::kTuple:
      for (const PyLiteral& i : v.items) {
        if (!hashable(i)) return false;
      }
      return true;
    default:
      return true;
  }
}

class Parser {
 public:
  Parser(const std::string& s, LongSuffix suffix) : tokens_(s, suffix) {
    advance();
  }

  PyLiteral parse() {
    Parsed first = expression();
    PyLiteral result = std::move(first.value);
    if (is_op(",")) {  // a bare tuple: literal_eval takes "1, 2" too
      PyLiteral tuple;
      tuple.kind = PyLiteral::Kind::kTuple;
      tuple.items.push_back(std::move(result));
      while (is_op(",")) {
        advance();
        if (at_line_end()) break;
        tuple.items.push_back(expression().value);
      }
      result = std::move(tuple);
    }
    if (!at_line_end()) fail("text after the literal");
    advance();
    if (token_.kind != PyToken::Kind::kEnd) fail("text after the literal");
    return result;
  }

 private:
  void advance() { token_ = tokens_.next(); }
  bool is_op(const char* text) const {
    return token_.kind == PyToken::Kind::kOp && token_.text == text;
  }
  bool at_line_end() const {
    return token_.kind == PyToken::Kind::kNewline ||
           token_.kind == PyToken::Kind::kEnd;
  }
  void expect(const char* text) {
    if (!is_op(text)) fail(std::string("a missing '") + text + "'");
    advance();
  }
  void open(const char* text) {
    tokens_.open();
    expect(text);
  }
  void close(const char* text) {
    if (!is_op(text)) fail(std::string("a missing '") + text + "'");
    tokens_.close();
    advance();
  }

  // A sum or difference of signed terms (literal_eval: at most one, of a
  // real number and an imaginary one).
  Parsed expression() {
    Parsed left = signed_term();
    if (!is_op("+") && !is_op("-")) return left;
    const bool minus = is_op("-");
    advance();
    Parsed right = signed_term();
    if (is_op("+") || is_op("-")) fail("an expression that is not a literal");
    const PyLiteral::Kind k = left.value.kind;
    if (left.form == Form::kOther ||
        (k != PyLiteral::Kind::kInt && k != PyLiteral::Kind::kFloat) ||
        right.form != Form::kConstant ||
        right.value.kind != PyLiteral::Kind::kComplex) {
      fail("an expression that is not a literal");
    }
    (void)minus;
    Parsed sum;
    sum.value.kind = PyLiteral::Kind::kComplex;
    return sum;
  }

  Parsed signed_term() {
    int signs = 0;
    bool negative = false;
    while (is_op("+") || is_op("-")) {
      negative ^= is_op("-");
      ++signs;
      advance();
    }
    Parsed p = primary();
    if (signs == 0) return p;
    if (signs > 1 || p.form != Form::kConstant || !is_number(p.value)) {
      fail("a sign before something other than a number");
    }
    if (negative) p.value.value = -p.value.value;
    p.form = Form::kSigned;
    return p;
  }

  Parsed primary() {
    Parsed p = atom();
    // Calls, subscripts and attributes are not literals.
    if (is_op("(") || is_op("[") || is_op(".")) {
      fail("an expression that is not a literal");
    }
    return p;
  }

  Parsed atom() {
    Parsed p;
    if (token_.kind == PyToken::Kind::kString) {
      p.value = token_.value;
      bool fstring = token_.fstring;
      advance();
      while (token_.kind == PyToken::Kind::kString) {  // adjacent literals
        if (token_.value.kind != p.value.kind) {
          fail("bytes and strings joined");
        }
        fstring |= token_.fstring;
        p.value.text += token_.value.text;
        advance();
      }
      if (fstring) fail("an f-string");
      p.form = Form::kConstant;
      return p;
    }
    if (token_.kind == PyToken::Kind::kNumber) {
      p.value = token_.value;
      p.form = Form::kConstant;
      advance();
      return p;
    }
    if (token_.kind == PyToken::Kind::kName) {
      const std::string name = token_.text;
      advance();
      p.form = Form::kConstant;
      if (name == "True" || name == "False") {
        p.value.kind = PyLiteral::Kind::kBool;
        p.value.value = name == "True";
      } else if (name == "None") {
        p.value.kind = PyLiteral::Kind::kNone;
      } else if (name == "set" && is_op("(")) {
        open("(");
        close(")");
        p.value.kind = PyLiteral::Kind::kSet;
        p.form = Form::kOther;
      } else {
        fail("the name '" + name + "'");
      }
      return p;
    }
    if (is_op("...")) {
      advance();
      p.value.kind = PyLiteral::Kind::kEllipsis;
      p.form = Form::kConstant;
      return p;
    }
    if (is_op("(")) {
      open("(");
      if (is_op(")")) {
        close(")");
        p.value.kind = PyLiteral::Kind::kTuple;
        return p;
      }
      Parsed inner = expression();
      if (!is_op(",")) {
        close(")");
        return inner;  // parentheses make no node
      }
      p.value.kind = PyLiteral::Kind::kTuple;
      p.value.items.push_back(std::move(inner.value));
      items_after_first(")", &p.value);
      return p;
    }
    if (is_op("[")) {
      open("[");
      p.value.kind = PyLiteral::Kind::kList;
      if (!is_op("]")) {
        p.value.items.push_back(expression().value);
        items_after_first("]", &p.value);
      } else {
        close("]");
      }
      return p;
    }
    if (is_op("{")) return braces();
    fail("something that is not a literal");
  }

  // ", item" ... [","] CLOSE after a first item.
  void items_after_first(const char* close_text, PyLiteral* into) {
    while (is_op(",")) {
      advance();
      if (is_op(close_text)) break;
      into->items.push_back(expression().value);
    }
    close(close_text);
  }

  Parsed braces() {
    Parsed p;
    open("{");
    if (is_op("}")) {
      close("}");
      p.value.kind = PyLiteral::Kind::kDict;
      return p;
    }
    if (is_op("**")) fail("a dictionary unpacked into another");
    PyLiteral first = expression().value;
    if (!is_op(":")) {  // a set
      p.value.kind = PyLiteral::Kind::kSet;
      p.value.items.push_back(std::move(first));
      items_after_first("}", &p.value);
      for (const PyLiteral& i : p.value.items) {
        if (!hashable(i)) fail("an unhashable set member");
      }
      return p;
    }
    p.value.kind = PyLiteral::Kind::kDict;
    advance();
    p.value.items.push_back(std::move(first));
    p.value.items.push_back(expression().value);
    while (is_op(",")) {
      advance();
      if (is_op("}")) break;
      if (is_op("**")) fail("a dictionary unpacked into another");
      p.value.items.push_back(expression().value);
      expect(":");
      p.value.items.push_back(expression().value);
    }
    close("}");
    for (std::size_t i = 0; i < p.value.items.size(); i += 2) {
      if (!hashable(p.value.items[i])) fail("an unhashable dictionary key");
    }
    return p;
  }

  PyTokenizer tokens_;
  PyToken token_;
};

}  // namespace

PyLiteral parse_py_literal(const std::string& source, LongSuffix suffix) {
  // Python compiles no source holding a null byte, even in a comment.
  if (source.find('\0') != std::string::npos) fail("a null byte");
  return Parser(source, suffix).parse();
}

}  // namespace distconv::io::internal
