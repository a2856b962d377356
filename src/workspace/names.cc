// Name rules for files crossing the boundary, and a safe rendering of any
// name for records and messages. Pure functions.
#include "workspace/names.h"

#include <cstdint>

namespace airlock::workspace {
namespace {

constexpr size_t kMaxComponentBytes = 128;
constexpr size_t kMaxPathBytes = 1024;
constexpr size_t kMaxPrintableBytes = 300;

bool is_allowed_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '+' || c == '-' || c == ' ';
}

std::string escape_byte(uint8_t b) {
  constexpr char kHex[] = "0123456789abcdef";
  return {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
}

}  // namespace

namespace {

std::optional<std::string> check_name(std::string_view name, bool leading_dot) {
  if (name.empty()) return "empty name";
  if (name.size() > kMaxComponentBytes)
    return "name longer than " + std::to_string(kMaxComponentBytes) + " bytes";
  if (name.front() == '.' && !leading_dot) return "name starts with '.'";
  if (name == "." || name == "..") return "name is '.' or '..'";
  if (name.front() == '-') return "name starts with '-'";
  if (name.front() == ' ') return "name starts with a space";
  for (char c : name) {
    if (!is_allowed_char(c))
      return "name contains " + printable(std::string_view(&c, 1)) +
             " (allowed: A-Z a-z 0-9 . _ + - space)";
  }
  return std::nullopt;
}

std::optional<std::string> check_path(std::string_view path, bool leading_dot) {
  if (path.empty()) return "empty path";
  if (path.size() > kMaxPathBytes)
    return "path longer than " + std::to_string(kMaxPathBytes) + " bytes";
  size_t start = 0;
  for (;;) {
    const size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash - start);
    if (auto reason = check_name(part, leading_dot)) return *reason;
    if (slash == std::string_view::npos) return std::nullopt;
    start = slash + 1;
  }
}

}  // namespace

std::optional<std::string> check_component(std::string_view name) { return check_name(name, false); }
std::optional<std::string> check_workspace_component(std::string_view name) { return check_name(name, true); }
std::optional<std::string> check_workspace_path(std::string_view path) { return check_path(path, true); }

std::optional<std::string> check_relative_path(std::string_view path) { return check_path(path, false); }

std::string printable(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    const bool plain = c >= 0x20 && c <= 0x7E && c != '\\';
    std::string piece = plain ? std::string(1, c) : escape_byte(static_cast<uint8_t>(c));
    if (out.size() + piece.size() > kMaxPrintableBytes) return out + "...";
    out += piece;
  }
  return out;
}

}  // namespace airlock::workspace
