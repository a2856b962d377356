#include "base/terminal_text.h"

#include <cstdint>

#include "base/utf8.h"

namespace airlock {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void escape_byte(std::string& out, uint8_t b) { out += {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]}; }

void escape_code_point(std::string& out, char32_t cp) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
}

// C1 controls, and the marks and overrides that reorder a line.
bool acts_on_terminal(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Where a tail starts that may still become a whole UTF-8 sequence or a
// CR LF with the next piece; s.size() when there is none.
size_t unfinished_tail(std::string_view s) {
  if (s.empty()) return 0;
  if (s.back() == '\r') return s.size() - 1;
  size_t i = s.size();
  for (int k = 0; k < 3 && i > 0; ++k) {
    --i;
    if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) break;  // not a continuation byte
  }
  return utf8_incomplete(s, i) ? i : s.size();
}

}  // namespace

std::string quoted_text(std::string_view s) { return terminal_safe(s, Newlines::kEscape); }

std::string terminal_safe(std::string_view s, Newlines newlines) {
  const bool keep = newlines == Newlines::kKeep;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      const bool shown =
          (b >= 0x20 && b != 0x7F) ||
          (keep && (b == '\n' || b == '\t' || (b == '\r' && i + 1 < s.size() && s[i + 1] == '\n')));
      if (shown)
        out += static_cast<char>(b);
      else
        escape_byte(out, b);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t len = utf8_sequence(s, i, &cp);
    if (len == 0) {
      escape_byte(out, b);
      ++i;
    } else {
      if (acts_on_terminal(cp))
        escape_code_point(out, cp);
      else
        out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string TerminalStream::feed(std::string_view piece) {
  held_.append(piece);
  const size_t tail = unfinished_tail(held_);
  std::string out = terminal_safe(std::string_view(held_).substr(0, tail));
  held_.erase(0, tail);
  return out;
}

std::string TerminalStream::finish() {
  std::string out = terminal_safe(held_);
  held_.clear();
  return out;
}

}  // namespace airlock
