#include "validate/xml.h"

#include <cstdint>

#include "base/utf8.h"
#include "validate/text.h"

namespace airlock::validate {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Non-ASCII bytes are accepted in names (the document is valid UTF-8 already).
bool is_name_start(char c) { return is_ascii_letter(c) || c == '_' || c == ':' || static_cast<uint8_t>(c) >= 0x80; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c) || c == '-' || c == '.'; }

// XML 1.0 Char: tab, LF, CR, U+0020..U+D7FF, U+E000..U+FFFD, U+10000..U+10FFFF.
bool is_xml_char(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

class Reader {
 public:
  Reader(std::string_view doc, const XmlEvents& events, const XmlLimits& limits)
      : s_(doc), events_(events), limits_(limits) {}

  Status read() {
    if (s_.size() > limits_.max_bytes)
      return fail("a document of " + std::to_string(s_.size()) + " bytes, more than the " +
                  std::to_string(limits_.max_bytes) + " bytes read");
    if (auto st = check_chars(); !st) return st;
    if (s_.starts_with("\xEF\xBB\xBF")) p_ = 3;
    if (starts("<?xml") && p_ + 5 < s_.size() && is_space(s_[p_ + 5])) {
      if (auto st = declaration(); !st) return st;
    }
    if (auto st = misc(); !st) return st;
    if (p_ >= s_.size()) return error("no root element");
    if (s_[p_] != '<') return error("text before the root element");
    if (auto st = elements(); !st) return st;
    if (auto st = misc(); !st) return st;
    if (p_ < s_.size()) return error(s_[p_] == '<' ? "a second root element" : "text after the root element");
    return {};
  }

 private:
  bool starts(std::string_view prefix) const { return s_.substr(p_).starts_with(prefix); }

  std::unexpected<Error> error(const std::string& what) const { return error_at(p_, what); }
  static std::unexpected<Error> error_at(size_t at, const std::string& what) {
    return fail("byte " + std::to_string(at) + ": " + what);
  }

  // Every character is a valid UTF-8 sequence and an XML Char.
  Status check_chars() {
    for (size_t i = 0; i < s_.size();) {
      char32_t c = 0;
      size_t len = utf8_sequence(s_, i, &c);
      if (len == 0) return fail("byte " + std::to_string(i) + ": not valid UTF-8");
      if (!is_xml_char(c)) return fail("byte " + std::to_string(i) + ": a character XML does not allow (U+" + hex(c) + ")");
      i += len;
    }
    return {};
  }

  static std::string hex(char32_t c) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (int shift = 20; shift >= 0; shift -= 4) {
      int d = static_cast<int>((c >> shift) & 0xF);
      if (!out.empty() || d != 0 || shift <= 12) out.push_back(kHex[d]);
    }
    return out;
  }

  void skip_space() {
    while (p_ < s_.size() && is_space(s_[p_])) ++p_;
  }

  Result<std::string_view> name() {
    size_t from = p_;
    if (p_ >= s_.size() || !is_name_start(s_[p_])) return error("a name was expected");
    while (p_ < s_.size() && is_name_char(s_[p_])) ++p_;
    return s_.substr(from, p_ - from);
  }

  // At '&': a character reference or one of the five predefined entities.
  Status reference(std::string* out) {
    size_t semi = s_.find(';', p_);
    if (semi == std::string_view::npos || semi - p_ > 12) return error("'&' that does not start a reference");
    std::string_view body = s_.substr(p_ + 1, semi - p_ - 1);
    char32_t c = 0;
    if (body.starts_with('#')) {
      bool hex_digits = body.starts_with("#x");
      std::string_view digits = body.substr(hex_digits ? 2 : 1);
      if (digits.empty()) return error("an empty character reference");
      uint32_t value = 0;
      for (char d : digits) {
        int v = is_digit(d) ? d - '0' : -1;
        if (hex_digits && v < 0 && ((d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F'))) v = (d | 0x20) - 'a' + 10;
        if (v < 0) return error("a malformed character reference");
        value = value * (hex_digits ? 16 : 10) + static_cast<uint32_t>(v);
        if (value > 0x10FFFF) return error("a character reference beyond U+10FFFF");
      }
      c = value;
      if (!is_xml_char(c)) return error("a character reference to a character XML does not allow");
    } else if (body == "amp") {
      c = '&';
    } else if (body == "lt") {
      c = '<';
    } else if (body == "gt") {
      c = '>';
    } else if (body == "quot") {
      c = '"';
    } else if (body == "apos") {
      c = '\'';
    } else {
      return error("undefined entity &" + printable(body, 40) +
                   "; (only &amp; &lt; &gt; &quot; &apos; and character references: there is no DTD)");
    }
    if (out) append_utf8(*out, c);
    p_ = semi + 1;
    return {};
  }

  Status comment() {  // at "<!--"
    size_t end = s_.find("--", p_ + 4);
    if (end == std::string_view::npos) return error("truncated: a comment is not closed");
    if (end + 2 >= s_.size() || s_[end + 2] != '>') return error("'--' inside a comment");
    p_ = end + 3;
    return {};
  }

  Status instruction() {  // at "<?"
    p_ += 2;
    auto target = name();
    if (!target) return std::unexpected(target.error());
    if (equals_ignoring_case(*target, "xml")) return error("an XML declaration that is not at the start");
    size_t end = s_.find("?>", p_);
    if (end == std::string_view::npos) return error("truncated: a processing instruction is not closed");
    if (end != p_ && !is_space(s_[p_])) return error("a processing instruction target must be followed by a space");
    p_ = end + 2;
    return {};
  }

  Status refused_markup() {
    if (starts("<!DOCTYPE")) return error("a DOCTYPE is refused (no DTD or entity declarations)");
    if (starts("<!ENTITY")) return error("an ENTITY declaration is refused (no DTD or entity declarations)");
    return error("markup '<!' that is neither a comment nor CDATA");
  }

  // <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
  Status declaration() {
    size_t end = s_.find("?>", p_);
    if (end == std::string_view::npos) return error("truncated: the XML declaration is not closed");
    p_ += 5;
    bool first = true;
    while (true) {
      skip_space();
      if (p_ == end) break;
      auto key = name();
      if (!key) return std::unexpected(key.error());
      skip_space();
      if (p_ >= end || s_[p_] != '=') return error("'=' expected in the XML declaration");
      ++p_;
      skip_space();
      if (p_ >= end || (s_[p_] != '"' && s_[p_] != '\'')) return error("a quoted value expected in the XML declaration");
      size_t close = s_.find(s_[p_], p_ + 1);
      if (close == std::string_view::npos || close > end) return error("an unterminated value in the XML declaration");
      std::string_view value = s_.substr(p_ + 1, close - p_ - 1);
      if (first && *key != "version") return error("the XML declaration must start with version");
      if (*key == "version" && value != "1.0" && value != "1.1")
        return error("XML version " + in_quotes(value, 20) + " (1.0 or 1.1 expected)");
      if (*key == "encoding" && !equals_ignoring_case(value, "utf-8"))
        return error("encoding " + in_quotes(value, 40) + " is not supported (UTF-8 only)");
      if (*key != "version" && *key != "encoding" && *key != "standalone")
        return error("unknown field " + in_quotes(*key, 40) + " in the XML declaration");
      first = false;
      p_ = close + 1;
    }
    if (first) return error("the XML declaration has no version");
    p_ = end + 2;
    return {};
  }

  // Comments, processing instructions and space, outside the root element.
  Status misc() {
    while (true) {
      skip_space();
      if (p_ >= s_.size()) return {};
      if (starts("<!--")) {
        if (auto st = comment(); !st) return st;
      } else if (starts("<?")) {
        if (auto st = instruction(); !st) return st;
      } else if (starts("<!")) {
        return refused_markup();
      } else {
        return {};
      }
    }
  }

  Status start_tag(std::vector<std::string_view>& open) {
    size_t at = p_++;  // '<'
    auto tag = name();
    if (!tag) return std::unexpected(tag.error());
    attributes_.clear();
    while (true) {
      size_t before = p_;
      skip_space();
      if (p_ >= s_.size()) return error("truncated: start tag <" + printable(*tag, 60) + "> is not closed");
      bool empty = starts("/>");
      if (empty || s_[p_] == '>') {
        if (open.size() >= limits_.max_depth)
          return error_at(at, "elements nested deeper than " + std::to_string(limits_.max_depth));
        p_ += empty ? 2 : 1;
        size_t depth = open.size() + 1;
        if (events_.start) {
          if (auto st = events_.start(XmlStart{*tag, attributes_, depth}); !st) return st;
        }
        if (!empty) {
          open.push_back(*tag);
        } else if (events_.end) {
          if (auto st = events_.end(*tag, depth); !st) return st;
        }
        return {};
      }
      if (p_ == before) return error("a space is expected before an attribute");
      if (auto st = attribute(*tag); !st) return st;
    }
  }

  Status attribute(std::string_view tag) {
    auto key = name();
    if (!key) return std::unexpected(key.error());
    skip_space();
    auto truncated = [&] { return error("truncated: start tag <" + printable(tag, 60) + "> is not closed"); };
    if (p_ >= s_.size()) return truncated();
    if (s_[p_] != '=') return error("'=' expected after attribute " + in_quotes(*key, 60));
    ++p_;
    skip_space();
    if (p_ >= s_.size()) return truncated();
    if (s_[p_] != '"' && s_[p_] != '\'') return error("a quoted attribute value expected");
    char quote = s_[p_++];
    std::string value;
    while (true) {
      if (p_ >= s_.size()) return error("truncated: an attribute value is not closed");
      char c = s_[p_];
      if (c == quote) break;
      if (c == '<') return error("'<' inside an attribute value");
      if (c == '&') {
        if (auto st = reference(&value); !st) return st;
        continue;
      }
      value.push_back(c == '\t' || c == '\n' || c == '\r' ? ' ' : c);
      ++p_;
    }
    ++p_;
    for (const auto& a : attributes_)
      if (a.name == *key) return error("attribute " + in_quotes(*key, 60) + " appears twice on <" + printable(tag, 60) + ">");
    if (attributes_.size() >= limits_.max_attributes)
      return error("more than " + std::to_string(limits_.max_attributes) + " attributes on one element");
    attributes_.push_back({*key, std::move(value)});
    return {};
  }

  Status end_tag(std::vector<std::string_view>& open) {
    p_ += 2;  // "</"
    auto tag = name();
    if (!tag) return std::unexpected(tag.error());
    skip_space();
    if (p_ >= s_.size() || s_[p_] != '>') return error("truncated: end tag </" + printable(*tag, 60) + "> is not closed");
    if (*tag != open.back())
      return error("end tag </" + printable(*tag, 60) + "> does not match <" + printable(open.back(), 60) + ">");
    ++p_;
    size_t depth = open.size();
    open.pop_back();
    if (events_.end) return events_.end(*tag, depth);
    return {};
  }

  // From the root's start tag to its end tag, without recursion.
  Status elements() {
    std::vector<std::string_view> open;
    if (auto st = start_tag(open); !st) return st;
    while (!open.empty()) {
      if (p_ >= s_.size()) return error("truncated: element <" + printable(open.back(), 60) + "> is not closed");
      char c = s_[p_];
      Status st;
      if (c == '<') {
        if (starts("</"))
          st = end_tag(open);
        else if (starts("<!--"))
          st = comment();
        else if (starts("<![CDATA[")) {
          size_t end = s_.find("]]>", p_ + 9);
          if (end == std::string_view::npos) return error("truncated: a CDATA section is not closed");
          p_ = end + 3;
        } else if (starts("<?"))
          st = instruction();
        else if (starts("<!"))
          st = refused_markup();
        else
          st = start_tag(open);
      } else if (c == '&') {
        st = reference(nullptr);
      } else {
        if (starts("]]>")) return error("']]>' in character data");
        ++p_;
      }
      if (!st) return st;
    }
    return {};
  }

  std::string_view s_;
  const XmlEvents& events_;
  const XmlLimits& limits_;
  size_t p_ = 0;
  std::vector<XmlAttribute> attributes_;
};

}  // namespace

Status read_xml(std::string_view doc, const XmlEvents& events, const XmlLimits& limits) {
  return Reader(doc, events, limits).read();
}

}  // namespace airlock::validate
