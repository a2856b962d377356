#include "base/utf8.h"

#include <cstdint>

namespace airlock {
namespace {

struct Lead {
  size_t length = 0;  // of the whole sequence; 0: not a lead byte
  uint32_t min = 0;   // the smallest value it may encode (longer forms are overlong)
  uint32_t bits = 0;  // the value bits the lead byte carries
};

Lead lead_of(uint8_t b) {
  if (b < 0x80) return {1, 0, b};
  if ((b & 0xE0) == 0xC0) return {2, 0x80, b & 0x1Fu};
  if ((b & 0xF0) == 0xE0) return {3, 0x800, b & 0x0Fu};
  if ((b & 0xF8) == 0xF0) return {4, 0x10000, b & 0x07u};
  return {};
}

}  // namespace

size_t utf8_sequence(std::string_view s, size_t i, char32_t* code_point) {
  const Lead lead = lead_of(static_cast<uint8_t>(s[i]));
  const size_t len = lead.length;
  uint32_t cp = lead.bits;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < lead.min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return len;
}

bool utf8_incomplete(std::string_view s, size_t i) {
  if (i >= s.size()) return false;
  const size_t len = lead_of(static_cast<uint8_t>(s[i])).length;
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
