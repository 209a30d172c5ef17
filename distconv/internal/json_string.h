// Internal: a string as a JSON string literal, quoted, with '"', '\' and
// the control characters escaped (RFC 8259), for the JSON the layers'
// profile and the benchmarks write (error messages hold newlines).
//
//   json_quoted("a \"b\"\n") == "\"a \\\"b\\\"\\n\""
#ifndef DISTCONV_INTERNAL_JSON_STRING_H_
#define DISTCONV_INTERNAL_JSON_STRING_H_

#include <cstdio>
#include <string>

namespace distconv::internal {

inline std::string json_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char code[8];
          std::snprintf(code, sizeof code, "\\u%04x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += code;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace distconv::internal

#endif  // DISTCONV_INTERNAL_JSON_STRING_H_
