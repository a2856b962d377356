#include "validate/text.h"

#include <cstdint>

#include "base/utf8.h"

namespace airlock::validate {

std::string printable(std::string_view s, size_t max_bytes, bool escape_quotes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    uint8_t b = static_cast<uint8_t>(s[i]);
    std::string piece;
    size_t len = utf8_sequence(s, i);
    if (len == 0 || b < 0x20 || b == 0x7F) {
      piece = {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
      len = 1;
    } else if (escape_quotes && (b == '"' || b == '\\')) {
      piece = {'\\', static_cast<char>(b)};
    } else {
      piece = std::string(s.substr(i, len));
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "...";
      return out;
    }
    out += piece;
    i += len;
  }
  return out;
}

std::string in_quotes(std::string_view s, size_t max_bytes) {
  return "\"" + printable(s, max_bytes) + "\"";
}

std::string collapse_space(std::string_view s) {
  std::string out;
  bool gap = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      gap = !out.empty();
      continue;
    }
    if (gap) out.push_back(' ');
    gap = false;
    out.push_back(c);
  }
  return out;
}

std::string truncate_utf8(std::string s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "...";
  return s;
}

}  // namespace airlock::validate
