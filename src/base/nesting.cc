#include "base/nesting.h"

#include <algorithm>

namespace airlock {
namespace {

// Where the scanner is: outside any string, or inside one of these.
enum class In { kCode, kBasic, kLiteral, kMultiBasic, kMultiLiteral, kComment };

bool starts(std::string_view text, size_t i, std::string_view what) {
  return text.substr(i, what.size()) == what;
}

}  // namespace

size_t nesting_depth(std::string_view text, size_t stop_above, NestingSyntax syntax) {
  const bool toml = syntax == NestingSyntax::kToml;
  In in = In::kCode;
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (in) {
      case In::kCode:
        if (c == '[' || c == '{') {
          deepest = std::max(deepest, ++depth);
          if (depth > stop_above) return depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
          --depth;
        } else if (c == '"') {
          in = toml && starts(text, i, R"(""")") ? In::kMultiBasic : In::kBasic;
          if (in == In::kMultiBasic) i += 2;
        } else if (toml && c == '\'') {
          in = starts(text, i, "'''") ? In::kMultiLiteral : In::kLiteral;
          if (in == In::kMultiLiteral) i += 2;
        } else if (toml && c == '#') {
          in = In::kComment;
        }
        break;
      case In::kBasic:
        if (c == '\\') ++i;  // the escaped byte (a quote, a backslash, the u of \uXXXX)
        else if (c == '"' || (toml && c == '\n')) in = In::kCode;
        break;
      case In::kLiteral:
        if (c == '\'' || c == '\n') in = In::kCode;
        break;
      case In::kMultiBasic:
        if (c == '\\') {
          ++i;
        } else if (starts(text, i, R"(""")")) {
          // Up to two more quotes belong to the string: """a""""" is a"".
          i += 2;
          while (i + 1 < text.size() && text[i + 1] == '"') ++i;
          in = In::kCode;
        }
        break;
      case In::kMultiLiteral:
        if (starts(text, i, "'''")) {
          i += 2;
          while (i + 1 < text.size() && text[i + 1] == '\'') ++i;
          in = In::kCode;
        }
        break;
      case In::kComment:
        if (c == '\n') in = In::kCode;
        break;
    }
  }
  return deepest;
}

}  // namespace airlock
