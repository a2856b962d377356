// Content-based file type detection. Every check here is pure and linear in
// the size of the content; nothing is decided by a file's name.
#include "workspace/file_type.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "validate/xml.h"

namespace airlock::workspace {
namespace {

constexpr std::array<std::pair<FileType, std::string_view>, 12> kNames = {{
    {FileType::kText, "text"},
    {FileType::kCsv, "csv"},
    {FileType::kTsv, "tsv"},
    {FileType::kJson, "json"},
    {FileType::kPng, "png"},
    {FileType::kJpeg, "jpeg"},
    {FileType::kPdf, "pdf"},
    {FileType::kSvg, "svg"},
    {FileType::kXml, "xml"},
    {FileType::kGitBundle, "git-bundle"},
    {FileType::kArchive, "archive"},
    {FileType::kBinary, "binary"},
}};

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

uint8_t byte_at(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Length of the UTF-8 sequence starting at s[i], or 0 when it is invalid:
// truncated, overlong, a surrogate, or above U+10FFFF.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const uint8_t b0 = byte_at(s, i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t min_b1 = 0x80, max_b1 = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) min_b1 = 0xA0;  // overlong
    if (b0 == 0xED) max_b1 = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) min_b1 = 0x90;  // overlong
    if (b0 == 0xF4) max_b1 = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // continuation byte, C0/C1 overlong lead, or F5..FF
  }
  if (i + len > s.size()) return 0;
  const uint8_t b1 = byte_at(s, i + 1);
  if (b1 < min_b1 || b1 > max_b1) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (!is_continuation(byte_at(s, i + k))) return 0;
  }
  return len;
}

bool is_allowed_control(uint8_t b) { return b == '\t' || b == '\n' || b == '\r'; }

// Valid UTF-8 with no NUL and no C0 control other than tab, LF and CR.
bool is_text(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t b = byte_at(s, i);
    if (b < 0x20 && !is_allowed_control(b)) return false;
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

bool is_png(std::string_view s) {
  constexpr std::string_view kSignature = "\x89PNG\r\n\x1A\n";
  // Length 13 + "IHDR" for the first chunk; an empty IEND chunk with its fixed CRC last.
  constexpr std::string_view kIhdr("\x00\x00\x00\x0DIHDR", 8);
  constexpr std::string_view kIend("\x00\x00\x00\x00IEND\xAE\x42\x60\x82", 12);
  if (s.size() < kSignature.size() + 25 + kIend.size()) return false;
  return s.starts_with(kSignature) && s.substr(kSignature.size()).starts_with(kIhdr) &&
         s.ends_with(kIend);
}

bool is_jpeg(std::string_view s) {
  return s.size() >= 5 && s.starts_with("\xFF\xD8\xFF") && s.ends_with("\xFF\xD9");
}

bool is_pdf(std::string_view s) {
  constexpr size_t kTrailerWindow = 1024;
  if (!s.starts_with("%PDF-")) return false;
  const size_t from = s.size() > kTrailerWindow ? s.size() - kTrailerWindow : 0;
  return s.substr(from).find("%%EOF") != std::string_view::npos;
}

// "# v2 git bundle\n" or "# v3 git bundle\n" (v3 adds "@capability" lines),
// then lines of prerequisites ("-") and refs ("<40 or 64 hex> <ref>"), a blank
// line, and a pack: "PACK" and version 2 or 3. The header must be text.
bool is_git_bundle(std::string_view s) {
  constexpr size_t kMaxHeader = 1 << 20;
  const bool v3 = s.starts_with("# v3 git bundle\n");
  if (!v3 && !s.starts_with("# v2 git bundle\n")) return false;
  const size_t end = s.find("\n\n");
  if (end == std::string_view::npos || end > kMaxHeader) return false;
  std::string_view pack = s.substr(end + 2);
  if (pack.size() < 12 || !pack.starts_with("PACK") || pack[4] != 0 || pack[5] != 0 || pack[6] != 0 ||
      (pack[7] != 2 && pack[7] != 3))
    return false;
  std::string_view header = s.substr(16, end + 1 - 16);
  while (!header.empty()) {
    const size_t nl = header.find('\n');
    std::string_view line = header.substr(0, nl);
    header.remove_prefix(nl + 1);
    if (line.starts_with('@') && v3) continue;
    if (line.starts_with('-')) line.remove_prefix(1);
    const size_t space = line.find(' ');
    std::string_view id = line.substr(0, space);
    if (id.size() != 40 && id.size() != 64) return false;
    if (id.find_first_not_of("0123456789abcdef") != std::string_view::npos) return false;
    for (char c : line)
      if (static_cast<uint8_t>(c) < 0x20 && c != '\t') return false;
  }
  return true;
}

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view skip_xml_space(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_xml_space(s[i])) ++i;
  return s.substr(i);
}

// Drops `open` ... `close` from the front of `s`; false when unterminated.
bool skip_construct(std::string_view& s, std::string_view open, std::string_view close) {
  if (!s.starts_with(open)) return false;
  const size_t end = s.find(close, open.size());
  if (end == std::string_view::npos) return false;
  s.remove_prefix(end + close.size());
  return true;
}

// A DOCTYPE without an internal subset (no '[': no entity declarations).
bool skip_plain_doctype(std::string_view& s) {
  if (!s.starts_with("<!DOCTYPE")) return false;
  const size_t end = s.find('>');
  if (end == std::string_view::npos) return false;
  if (s.substr(0, end).find('[') != std::string_view::npos) return false;
  s.remove_prefix(end + 1);
  return true;
}

// `s` is already known to be text. The root element must be <svg, reached
// only through an XML declaration, comments and a plain DOCTYPE.
bool is_svg(std::string_view s) {
  if (s.starts_with(kUtf8Bom)) s.remove_prefix(kUtf8Bom.size());
  s = skip_xml_space(s);
  if (s.starts_with("<?xml")) {
    if (!skip_construct(s, "<?xml", "?>")) return false;
  }
  for (;;) {
    s = skip_xml_space(s);
    if (s.starts_with("<!--")) {
      if (!skip_construct(s, "<!--", "-->")) return false;
    } else if (s.starts_with("<!DOCTYPE")) {
      if (!skip_plain_doctype(s)) return false;
    } else {
      break;
    }
  }
  if (!s.starts_with("<svg") || s.size() < 5) return false;
  const char next = s[4];
  return is_xml_space(next) || next == '>' || next == '/';
}

// `s` is already known to be text: an object or an array that parses.
bool is_json(std::string_view s) {
  std::string_view body = s.starts_with(kUtf8Bom) ? s.substr(kUtf8Bom.size()) : s;
  body = skip_xml_space(body);  // JSON whitespace is the same four characters
  if (body.empty() || (body.front() != '{' && body.front() != '[')) return false;
  return nlohmann::json::accept(s);
}

// `s` is already known to be text: markup first, and a well-formed document.
bool is_xml(std::string_view s) {
  std::string_view body = s.starts_with(kUtf8Bom) ? s.substr(kUtf8Bom.size()) : s;
  body = skip_xml_space(body);
  if (!body.starts_with('<')) return false;
  return validate::read_xml(s).has_value();
}

// RFC-4180 records separated by '\n' or "\r\n"; fields separated by `delim`;
// quoted fields may hold delimiters, doubled quotes and line breaks. True when
// every non-empty record has the same field count and that count is > 1.
bool is_delimited(std::string_view s, char delim) {
  size_t expected = 0;  // 0: no non-empty record seen yet
  size_t fields = 1;
  bool record_empty = true;
  auto end_record = [&]() {
    if (record_empty) return true;  // blank line
    if (expected == 0) expected = fields;
    const bool same = fields == expected;
    fields = 1;
    record_empty = true;
    return same;
  };
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"' && (record_empty || s[i - 1] == delim)) {
      // Quoted field: runs to a lone quote, which must end the field.
      record_empty = false;
      size_t j = i + 1;
      for (;;) {
        j = s.find('"', j);
        if (j == std::string_view::npos) return false;  // unterminated
        if (j + 1 < s.size() && s[j + 1] == '"') {
          j += 2;
          continue;
        }
        break;
      }
      i = j + 1;
      if (i < s.size() && s[i] != delim && s[i] != '\n' && !s.substr(i).starts_with("\r\n"))
        return false;  // text after a closing quote
      continue;
    }
    if (c == '\n' || s.substr(i).starts_with("\r\n")) {
      if (!end_record()) return false;
      i += (c == '\n') ? 1 : 2;
      continue;
    }
    if (c == '"') return false;  // a quote inside an unquoted field
    record_empty = false;
    if (c == delim) ++fields;
    ++i;
  }
  if (!end_record()) return false;
  return expected > 1;
}

}  // namespace

std::string_view type_name(FileType type) {
  for (const auto& [t, name] : kNames) {
    if (t == type) return name;
  }
  return "binary";
}

std::optional<FileType> type_from_name(std::string_view name) {
  for (const auto& [t, n] : kNames) {
    if (n == name) return t;
  }
  return std::nullopt;
}

bool is_archive(std::string_view c) {
  return c.starts_with(std::string_view("PK\x03\x04", 4)) || c.starts_with(std::string_view("PK\x05\x06", 4)) ||
         c.starts_with("\x1f\x8b\x08") || (c.size() >= 512 && c.substr(257, 5) == "ustar");
}

FileType detect_type(std::string_view content) {
  if (content.empty()) return FileType::kText;
  if (is_png(content)) return FileType::kPng;
  if (is_jpeg(content)) return FileType::kJpeg;
  if (is_pdf(content)) return FileType::kPdf;
  if (is_git_bundle(content)) return FileType::kGitBundle;
  if (is_archive(content)) return FileType::kArchive;
  if (!is_text(content)) return FileType::kBinary;
  if (is_json(content)) return FileType::kJson;
  if (is_svg(content)) return FileType::kSvg;
  if (is_xml(content)) return FileType::kXml;
  if (is_delimited(content, ',')) return FileType::kCsv;
  if (is_delimited(content, '\t')) return FileType::kTsv;
  return FileType::kText;
}

TypeSet default_input_types() {
  return {FileType::kText, FileType::kCsv,  FileType::kTsv, FileType::kJson,
          FileType::kPng,  FileType::kJpeg, FileType::kPdf, FileType::kXml, FileType::kGitBundle};
}

TypeSet default_output_types() {
  TypeSet types = default_input_types();
  types.erase(FileType::kGitBundle);
  types.insert(FileType::kSvg);
  return types;
}

std::string describe_types(const TypeSet& types) {
  std::string out;
  for (FileType t : types) {
    if (!out.empty()) out += ", ";
    out += type_name(t);
  }
  return out.empty() ? "none" : out;
}

}  // namespace airlock::workspace
