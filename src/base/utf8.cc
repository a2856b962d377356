#include "base/utf8.h"

#include <cstdint>

namespace airlock {
namespace {

// The length a lead byte announces, and the smallest value it may encode.
size_t announced_length(uint8_t b, uint32_t* min, uint32_t* bits) {
  if (b < 0x80) return *min = 0, *bits = b, 1;
  if ((b & 0xE0) == 0xC0) return *min = 0x80, *bits = b & 0x1F, 2;
  if ((b & 0xF0) == 0xE0) return *min = 0x800, *bits = b & 0x0F, 3;
  if ((b & 0xF8) == 0xF0) return *min = 0x10000, *bits = b & 0x07, 4;
  return 0;
}

}  // namespace

size_t utf8_sequence(std::string_view s, size_t i, char32_t* code_point) {
  uint32_t min = 0, cp = 0;
  const size_t len = announced_length(static_cast<uint8_t>(s[i]), &min, &cp);
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return len;
}

bool utf8_incomplete(std::string_view s, size_t i) {
  uint32_t min = 0, cp = 0;
  const size_t len = announced_length(static_cast<uint8_t>(s[i]), &min, &cp);
  if (len < 2 || i + len <= s.size()) return false;
  for (size_t k = i + 1; k < s.size(); ++k)
    if ((static_cast<uint8_t>(s[k]) & 0xC0) != 0x80) return false;
  return true;
}

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_sequence(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace airlock
