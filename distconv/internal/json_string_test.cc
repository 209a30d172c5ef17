// json_quoted: quotes, escapes what JSON requires, leaves the rest (UTF-8
// included) as it is.
#include "distconv/internal/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace distconv::internal {
namespace {

TEST(JsonQuoted, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_quoted(""), "\"\"");
  EXPECT_EQ(json_quoted("conv1.bn"), "\"conv1.bn\"");
  EXPECT_EQ(json_quoted("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
  EXPECT_EQ(json_quoted("line 1\nline 2\ttab\r"),
            "\"line 1\\nline 2\\ttab\\r\"");
  EXPECT_EQ(json_quoted(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_quoted("x\u00b2 \u27e8y\u27e9"), "\"x\u00b2 \u27e8y\u27e9\"");
}

}  // namespace
}  // namespace distconv::internal
