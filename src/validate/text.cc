#include "validate/text.h"

#include <cstdint>

namespace airlock::validate {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] (no overlongs, no
// surrogates, at most U+10FFFF), or 0.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b = byte(i);
  if (b < 0x80) return 1;
  size_t len;
  uint32_t min;
  uint32_t cp;
  if ((b & 0xE0) == 0xC0) len = 2, min = 0x80, cp = b & 0x1F;
  else if ((b & 0xF0) == 0xE0) len = 3, min = 0x800, cp = b & 0x0F;
  else if ((b & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = b & 0x07;
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

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

std::string truncate_utf8(std::string s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  s += "...";
  return s;
}

}  // namespace airlock::validate
