#include "mcp/content.h"

#include <map>

#include "base/utf8.h"

namespace airlock::mcp {

using json = nlohmann::json;

CappedText cap_text(std::string_view text, size_t cap) {
  CappedText out;
  out.original_bytes = text.size();
  out.text.reserve(std::min(text.size(), cap));
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  for (size_t i = 0; i < text.size();) {
    size_t len = utf8_sequence(text, i);
    std::string_view piece = len ? text.substr(i, len) : kReplacement;
    if (out.text.size() + piece.size() > cap) {
      out.capped = true;
      break;
    }
    out.text.append(piece);
    i += len ? len : 1;
  }
  return out;
}

std::string cap_note(const std::string& what, const CappedText& t) {
  if (!t.capped) return "";
  return "[" + what + ": the first " + std::to_string(t.text.size()) + " of " +
         std::to_string(t.original_bytes) + " bytes are shown; the rest was cut]";
}

json text_block(const std::string& text) { return json{{"type", "text"}, {"text", text}}; }

json image_block(const std::string& base64, const std::string& mime_type) {
  return json{{"type", "image"}, {"data", base64}, {"mimeType", mime_type}};
}

json resource_link(const std::string& uri, const std::string& name, const std::string& mime_type,
                   const std::string& sha256, uint64_t size) {
  return json{{"type", "resource_link"},
              {"uri", uri},
              {"name", name},
              {"mimeType", mime_type},
              {"size", size},
              {"description", "sha256 " + sha256 + ", " + std::to_string(size) + " bytes"},
              {"_meta", {{"sha256", sha256}}}};
}

std::string mime_of(const std::string& detected_type) {
  static const std::map<std::string, std::string> kTypes = {
      {"png", "image/png"},         {"jpeg", "image/jpeg"}, {"pdf", "application/pdf"},
      {"json", "application/json"}, {"csv", "text/csv"},    {"tsv", "text/tab-separated-values"},
      {"svg", "image/svg+xml"},     {"text", "text/plain"}};
  auto t = kTypes.find(detected_type);
  return t == kTypes.end() ? "application/octet-stream" : t->second;
}

}  // namespace airlock::mcp
