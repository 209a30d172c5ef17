#include "io/internal/py_tokens.h"

#include <cstddef>
#include <string>
#include <utility>

namespace distconv::io::internal {
namespace {

[[noreturn]] void fail(const std::string& why) { throw PyLiteralError(why); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_word(char c) {
  // Non-ASCII characters may be identifier characters in Python.
  return is_ascii_letter(c) || is_digit(c) ||
         static_cast<unsigned char>(c) >= 0x80;
}
int digit_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

void append_utf8(std::string& out, unsigned long code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

}  // namespace

struct PyTokenizer::State {
  State(const std::string& s, LongSuffix suffix)
      : s_(s), suffix_(suffix), latin1_(suffix == LongSuffix::kDropped) {
    // literal_eval strips leading blanks and tabs.
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    line_start_ = true;
    first_column_free_ = true;
  }

  PyToken next() {
    for (;;) {
      if (line_start_ && depth_ == 0) start_line();
      if (pos_ >= s_.size()) return at_end();
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') ++pos_;
        after_number_ = false;
      } else if (c == '\\') {
        ++pos_;
        if (!skip_newline()) {
          fail(pos_ >= s_.size() ? "unexpected EOF after a line continuation"
                                 : "unexpected character after a line "
                                   "continuation");
        }
        continued_ = true;
        // A line continued before its first token: the next line's blanks
        // are its indentation.
        if (!line_has_tokens_ && depth_ == 0 && pos_ < s_.size() &&
            (s_[pos_] == ' ' || s_[pos_] == '\t')) {
          fail("unexpected indent");
        }
      } else if (c == '\n' || c == '\r') {
        skip_newline();
        after_number_ = false;
        continued_ = false;
        if (depth_ == 0) {
          line_start_ = true;
          if (line_has_tokens_) {
            line_has_tokens_ = false;
            return newline();
          }
        }
      } else {
        PyToken t = token();
        if (t.kind == PyToken::Kind::kName && t.text == "L" && after_number_ &&
            suffix_ == LongSuffix::kDropped) {
          continue;  // NumPy's _filter_header (a Python 2 long)
        }
        after_number_ = t.kind == PyToken::Kind::kNumber;
        continued_ = false;
        line_has_tokens_ = true;
        return t;
      }
    }
  }

  // Brackets nest at most 200 deep, as in Python's tokenizer.
  void open() {
    if (++depth_ > 200) fail("too many nested parentheses");
  }
  void close() { --depth_; }

  bool skip_newline() {
    if (pos_ < s_.size() && s_[pos_] == '\r') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '\n') ++pos_;
      return true;
    }
    if (pos_ < s_.size() && s_[pos_] == '\n') {
      ++pos_;
      return true;
    }
    return false;
  }

  // A physical line at depth 0: blank lines are skipped; a line with
  // something on it must not be indented, and nothing may follow the
  // expression's line.
  void start_line() {
    for (;;) {
      std::size_t p = pos_;
      bool indented = false;
      while (p < s_.size() &&
             (s_[p] == ' ' || s_[p] == '\t' || s_[p] == '\f')) {
        indented = s_[p] == '\f' ? false : true;
        ++p;
      }
      if (p < s_.size() && s_[p] == '#') {
        while (p < s_.size() && s_[p] != '\n' && s_[p] != '\r') ++p;
      }
      if (p >= s_.size()) {
        pos_ = p;
        break;
      }
      if (s_[p] == '\n' || s_[p] == '\r') {  // a blank line
        pos_ = p;
        skip_newline();
        first_column_free_ = false;
        continue;
      }
      // On the first line, literal_eval strips blanks and tabs; NumPy's
      // _filter_header (formats 1.0 and 2.0) any blanks, tabs and form
      // feeds.
      if (indented &&
          !(first_column_free_ && suffix_ == LongSuffix::kDropped)) {
        fail("unexpected indent");
      }
      if (ended_) fail("text after the literal");
      pos_ = p;
      break;
    }
    first_column_free_ = false;
    line_start_ = false;
  }

  PyToken at_end() {
    if (depth_ > 0) fail("unexpected EOF inside brackets");
    if (continued_) fail("unexpected EOF after a line continuation");
    if (line_has_tokens_) {
      line_has_tokens_ = false;
      return newline();
    }
    PyToken t;
    t.kind = PyToken::Kind::kEnd;
    return t;
  }

  PyToken newline() {
    ended_ = true;
    PyToken t;
    t.kind = PyToken::Kind::kNewline;
    return t;
  }

  PyToken token() {
    const char c = s_[pos_];
    if (c == '.' && s_.compare(pos_, 3, "...") == 0) {
      pos_ += 3;
      return op("...");
    }
    if (is_digit(c) ||
        (c == '.' && pos_ + 1 < s_.size() && is_digit(s_[pos_ + 1]))) {
      return number();
    }
    if (is_word(c) && !is_digit(c)) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        fail("a character outside ASCII outside strings");
      }
      std::size_t end = pos_;
      while (end < s_.size() && is_ascii_letter(s_[end])) ++end;
      while (end < s_.size() && is_word(s_[end])) {
        if (static_cast<unsigned char>(s_[end]) >= 0x80) {
          fail("a character outside ASCII outside strings");
        }
        ++end;
      }
      const std::string word = s_.substr(pos_, end - pos_);
      if (end < s_.size() && (s_[end] == '\'' || s_[end] == '"') &&
          is_prefix(word)) {
        pos_ = end;
        return string(word);
      }
      pos_ = end;
      PyToken t;
      t.kind = PyToken::Kind::kName;
      t.text = word;
      return t;
    }
    if (c == '\'' || c == '"') return string("");
    for (const char* o :
         {"**", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*", "."}) {
      const std::size_t n = std::char_traits<char>::length(o);
      if (s_.compare(pos_, n, o) == 0) {
        pos_ += n;
        return op(o);
      }
    }
    if (static_cast<unsigned char>(c) >= 0x80) {
      fail("a character outside ASCII outside strings");
    }
    if (c == '\0') fail("a null byte");
    fail(std::string("the character '") + c + "'");
  }

  static PyToken op(const char* text) {
    PyToken t;
    t.kind = PyToken::Kind::kOp;
    t.text = text;
    return t;
  }

  static bool is_prefix(const std::string& w) {
    std::string l;
    for (char c : w) l += static_cast<char>(c | 0x20);
    for (const char* p : {"r", "u", "b", "br", "rb", "f", "fr", "rf"}) {
      if (l == p) return true;
    }
    return false;
  }

  // A string or bytes literal after its prefix.
  PyToken string(const std::string& prefix) {
    bool raw = false, bytes = false, f = false;
    for (char c : prefix) {
      const char l = static_cast<char>(c | 0x20);
      raw |= l == 'r';
      bytes |= l == 'b';
      f |= l == 'f';
    }
    const char quote = s_[pos_];
    const bool triple = s_.compare(pos_, 3, std::string(3, quote)) == 0;
    pos_ += triple ? 3 : 1;
    std::string value;
    for (;;) {
      if (pos_ >= s_.size()) fail("an unterminated string");
      const char c = s_[pos_];
      if (c == quote &&
          (!triple || s_.compare(pos_, 3, std::string(3, quote)) == 0)) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if ((c == '\n' || c == '\r') && !triple) fail("an unterminated string");
      if (c == '\\') {
        ++pos_;
        if (pos_ >= s_.size()) fail("an unterminated string");
        if (raw) {
          value += '\\';
          if (s_[pos_] == '\r' || s_[pos_] == '\n') {
            skip_newline();
            value += '\n';
          } else {
            character(value, bytes);
          }
        } else {
          escape(value, bytes);
        }
        continue;
      }
      if (c == '\r') {  // newlines in the source read as \n
        skip_newline();
        value += '\n';
        continue;
      }
      character(value, bytes);
    }
    PyToken t;
    t.kind = PyToken::Kind::kString;
    t.fstring = f;
    t.value.kind = bytes ? PyLiteral::Kind::kBytes : PyLiteral::Kind::kStr;
    t.value.text = std::move(value);
    return t;
  }

  // One source character into a literal's value.
  void character(std::string& value, bool bytes) {
    const unsigned char c = static_cast<unsigned char>(s_[pos_++]);
    if (c == 0) fail("a null byte");
    if (c < 0x80) {
      value += static_cast<char>(c);
      return;
    }
    if (bytes) fail("bytes can only contain ASCII literal characters");
    if (latin1_) {
      append_utf8(value, c);
    } else {
      value += static_cast<char>(c);  // a UTF-8 byte, copied as is
    }
  }

  void escape(std::string& value, bool bytes) {
    const char c = s_[pos_];
    const auto hex = [&](int n) {
      unsigned long code = 0;
      for (int i = 0; i < n; ++i) {
        if (pos_ >= s_.size() || digit_value(s_[pos_]) > 15) {
          fail("a truncated \\x, \\u or \\U escape");
        }
        code = code * 16 + static_cast<unsigned long>(digit_value(s_[pos_++]));
      }
      return code;
    };
    switch (c) {
      case '\n':
      case '\r':
        skip_newline();
        return;
      case '\\':
      case '\'':
      case '"':
        value += c;
        ++pos_;
        return;
      case 'a':
        value += '\a';
        ++pos_;
        return;
      case 'b':
        value += '\b';
        ++pos_;
        return;
      case 'f':
        value += '\f';
        ++pos_;
        return;
      case 'n':
        value += '\n';
        ++pos_;
        return;
      case 'r':
        value += '\r';
        ++pos_;
        return;
      case 't':
        value += '\t';
        ++pos_;
        return;
      case 'v':
        value += '\v';
        ++pos_;
        return;
      case 'x': {
        ++pos_;
        const unsigned long code = hex(2);
        if (bytes) {
          value += static_cast<char>(code);
        } else {
          append_utf8(value, code);
        }
        return;
      }
      default:
        break;
    }
    if (c >= '0' && c <= '7') {
      unsigned long code = 0;
      for (int i = 0;
           i < 3 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7';
           ++i) {
        code = code * 8 + static_cast<unsigned long>(s_[pos_++] - '0');
      }
      if (bytes) {
        value += static_cast<char>(code & 0xFF);
      } else {
        append_utf8(value, code);
      }
      return;
    }
    if (!bytes && (c == 'u' || c == 'U')) {
      ++pos_;
      const unsigned long code = hex(c == 'u' ? 4 : 8);
      if (code > 0x10FFFF) fail("an illegal Unicode character escape");
      append_utf8(value, code);
      return;
    }
    if (!bytes && c == 'N') {
      fail("a \\N{...} escape (distconv does not read Unicode names)");
    }
    value += '\\';  // not an escape: kept as written
    character(value, bytes);
  }

  // Digits of `base` with single underscores between them (and, after a
  // base prefix, before the first): at least one.
  void digits(int base, bool underscore_first) {
    bool any = false, underscore = false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '_') {
        if (underscore || (!any && !underscore_first))
          fail("an invalid number");
        underscore = true;
        ++pos_;
        continue;
      }
      const int v = digit_value(c);
      if (v >= base) {
        if (v < 16 && base < 16 && is_digit(c)) fail("an invalid digit");
        break;
      }
      any = true;
      underscore = false;
      ++pos_;
    }
    if (!any || underscore) fail("an invalid number");
  }

  PyToken number() {
    const std::size_t start = pos_;
    PyToken t;
    t.kind = PyToken::Kind::kNumber;
    PyLiteral& v = t.value;
    v.kind = PyLiteral::Kind::kInt;
    const char p =
        pos_ + 1 < s_.size() ? static_cast<char>(s_[pos_ + 1] | 0x20) : '\0';
    if (s_[pos_] == '0' && (p == 'x' || p == 'o' || p == 'b')) {
      const int base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
      pos_ += 2;
      const std::size_t first = pos_;
      digits(base, true);
      set_int(v, first, base);
    } else {
      bool is_float = false;
      if (s_[pos_] != '.') digits(10, false);
      const std::size_t int_end = pos_;
      if (pos_ < s_.size() && s_[pos_] == '.') {
        is_float = true;
        ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '_') fail("an invalid number");
        if (pos_ < s_.size() && is_digit(s_[pos_])) digits(10, false);
      }
      if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
        std::size_t q = pos_ + 1;
        if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
        if (q >= s_.size() || !is_digit(s_[q])) fail("an invalid number");
        pos_ = q;
        digits(10, false);
        is_float = true;
      }
      if (pos_ < s_.size() && (s_[pos_] == 'j' || s_[pos_] == 'J')) {
        ++pos_;
        v.kind = PyLiteral::Kind::kComplex;
      } else if (is_float) {
        v.kind = PyLiteral::Kind::kFloat;
      } else {
        // Decimal integers have no leading zeros ("00" is zero).
        for (std::size_t i = start; i < int_end; ++i) {
          if (s_[start] == '0' && s_[i] != '0' && s_[i] != '_') {
            fail("leading zeros in a decimal integer");
          }
        }
        set_int(v, start, 10);
      }
    }
    // A number runs into no letter or digit (but a dropped "L").
    if (pos_ < s_.size() && is_word(s_[pos_])) {
      std::size_t end = pos_;
      while (end < s_.size() && is_word(s_[end])) ++end;
      if (suffix_ != LongSuffix::kDropped ||
          s_.compare(pos_, end - pos_, "L") != 0) {
        fail("an invalid number");
      }
    }
    return t;
  }

  void set_int(PyLiteral& v, std::size_t first, int base) {
    v.value = 0;
    v.fits = true;
    for (std::size_t i = first; i < pos_; ++i) {
      if (s_[i] == '_') continue;
      if (v.value >= (std::int64_t{1} << 62) / base) v.fits = false;
      if (v.fits) v.value = v.value * base + digit_value(s_[i]);
    }
    if (v.value >= (std::int64_t{1} << 62)) v.fits = false;
  }

  const std::string& s_;
  LongSuffix suffix_;
  bool latin1_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  bool line_start_ = false;
  bool first_column_free_ = false;  // the first line, its blanks stripped
  bool line_has_tokens_ = false;
  bool ended_ = false;      // the expression's line has ended
  bool continued_ = false;  // a line continuation not yet followed by a token
  bool after_number_ = false;
};

PyTokenizer::PyTokenizer(const std::string& source, LongSuffix suffix)
    : state_(std::make_unique<State>(source, suffix)) {}
PyTokenizer::~PyTokenizer() = default;
PyToken PyTokenizer::next() { return state_->next(); }
void PyTokenizer::open() { state_->open(); }
void PyTokenizer::close() { state_->close(); }

}  // namespace distconv::io::internal
