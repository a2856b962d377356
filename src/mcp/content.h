// The content blocks of a tool result (text, image, resource_link) and the
// capping of long text. Pure.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace airlock::mcp {

// What a tool result carries of one text (stdout, stderr, a traceback, a
// file): enough for a model to read, little enough for its context.
inline constexpr size_t kTextCapBytes = 16 << 10;
// Images larger than this come back as a resource link instead.
inline constexpr size_t kImageCapBytes = 4 << 20;

struct CappedText {
  std::string text;  // valid UTF-8 (bad bytes as U+FFFD), at most the cap
  bool capped = false;
  size_t original_bytes = 0;
};

// The first `cap` bytes of `text`, cut at a character boundary (never in
// the middle of a UTF-8 sequence).
CappedText cap_text(std::string_view text, size_t cap = kTextCapBytes);

// "[stdout: 16384 of 81920 bytes shown; the rest was cut]" or "".
std::string cap_note(const std::string& what, const CappedText& t);

nlohmann::json text_block(const std::string& text);
nlohmann::json image_block(const std::string& base64, const std::string& mime_type);
// A link to a file the API serves (`uri`); its sha256 goes in the
// description and in _meta so that a client can verify what it downloads.
nlohmann::json resource_link(const std::string& uri, const std::string& name,
                             const std::string& mime_type, const std::string& sha256,
                             uint64_t size);

// The MIME type of an airlock detected type ("png" -> "image/png").
std::string mime_of(const std::string& detected_type);

}  // namespace airlock::mcp
