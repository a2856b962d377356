#include "requests/data_request.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/utf8.h"

namespace airlock::requests {
namespace {

using nlohmann::json;

// A request is an object of scalars, params one level below.
constexpr size_t kRequestDepth = 2;

bool name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// Text the application will show: valid UTF-8 (nlohmann checks it while
// parsing), no control characters but tab and newline, no C1 controls.
// Returns the number of code points, or nothing when a character is refused.
std::optional<size_t> shown_text_chars(std::string_view s) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const size_t len = utf8_sequence(s, i, &cp);
    if (len == 0) return std::nullopt;
    const bool control = (cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7f && cp < 0xa0);
    if (control) return std::nullopt;
    i += len;
    ++chars;
  }
  return chars;
}

std::unexpected<Error> refuse(std::string what) { return fail(ErrorKind::kInvalid, std::move(what)); }

Result<std::string> text_field(const json& obj, const char* key, size_t max_chars, bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return refuse(std::string(key) + ": required");
    return std::string();
  }
  if (!it->is_string()) return refuse(std::string(key) + ": must be a string");
  const auto& s = it->get_ref<const std::string&>();
  auto chars = shown_text_chars(s);
  if (!chars) return refuse(std::string(key) + ": control characters are not allowed");
  if ((required && *chars == 0) || *chars > max_chars)
    return refuse(std::string(key) + ": must be " + (required ? "1" : "0") + "-" +
                  std::to_string(max_chars) + " characters");
  return s;
}

Result<std::string> params_field(const json& obj) {
  auto it = obj.find("params");
  if (it == obj.end() || it->is_null()) return std::string("{}");
  if (!it->is_object()) return refuse("params: must be a JSON object");
  if (it->size() > kMaxParams)
    return refuse("params: at most " + std::to_string(kMaxParams) + " keys");
  for (const auto& [key, value] : it->items()) {
    if (!valid_request_name(key))
      return refuse("params: keys must be 1-64 characters of A-Z a-z 0-9 . _ -");
    if (value.is_string()) {
      if (!shown_text_chars(value.get_ref<const std::string&>()))
        return refuse("params." + key + ": control characters are not allowed");
    } else if (!value.is_number() && !value.is_boolean() && !value.is_null()) {
      return refuse("params." + key + ": must be a string, number, boolean or null");
    }
  }
  return it->dump();
}

}  // namespace

std::string request_id(size_t n) { return "r" + std::to_string(n); }

bool valid_request_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameChars) return false;
  for (char c : name)
    if (!name_char(c)) return false;
  return true;
}

std::string beyond_limit_reason(const Limits& limits) {
  return "over the limit of " + std::to_string(limits.requests) + " requests: not read";
}

Result<DataRequest> parse_data_request(std::string_view line, std::string id, const Limits& limits) {
  if (line.size() > limits.bytes_per_request)
    return refuse("longer than " + std::to_string(limits.bytes_per_request) + " bytes");
  auto parsed = parse_json(line, kRequestDepth);
  if (!parsed) return refuse("not valid JSON, or nested deeper than params");
  const json& obj = *parsed;
  if (!obj.is_object()) return refuse("not a JSON object");
  for (const auto& [key, value] : obj.items()) {
    (void)value;
    if (key != "name" && key != "why" && key != "description" && key != "params")
      return refuse("unknown field (name, why, description, params only)");
  }
  DataRequest r;
  r.id = std::move(id);
  auto name = obj.find("name");
  if (name == obj.end() || !name->is_string() ||
      !valid_request_name(name->get_ref<const std::string&>()))
    return refuse("name: must be 1-64 characters of A-Z a-z 0-9 . _ -");
  r.name = name->get<std::string>();
  auto why = text_field(obj, "why", kMaxWhyChars, true);
  if (!why) return forward(why);
  r.why = std::move(*why);
  auto description = text_field(obj, "description", kMaxDescriptionChars, false);
  if (!description) return forward(description);
  r.description = std::move(*description);
  auto params = params_field(obj);
  if (!params) return forward(params);
  r.params_json = std::move(*params);
  return r;
}

RequestReader::RequestReader(Limits limits) : limits_(limits) {
  beyond_.reason = beyond_limit_reason(limits_);
}

bool RequestReader::feed(std::string_view bytes) {
  if (closed_) return false;
  const uint64_t room = limits_.channel_bytes - std::min<uint64_t>(bytes_read_, limits_.channel_bytes);
  const bool over = bytes.size() > room;
  if (over) bytes = bytes.substr(0, room);
  bytes_read_ += bytes.size();
  consume(bytes);
  if (!over) return true;
  closed_ = true;
  line_.clear();
  line_bytes_ = 0;
  line_nonblank_ = false;
  return false;
}

void RequestReader::consume(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    line_bytes_ += piece.size();
    for (char c : piece)
      if (c != ' ' && c != '\t' && c != '\r') {
        line_nonblank_ = true;
        break;
      }
    // Keep one byte past the cap, so that an over-long line is known as such.
    if (lines_ < limits_.requests && line_.size() <= limits_.bytes_per_request) {
      const size_t room = limits_.bytes_per_request + 1 - line_.size();
      line_.append(piece.substr(0, room));
    }
    if (nl == std::string_view::npos) return;
    end_line();
    bytes.remove_prefix(nl + 1);
  }
}

void RequestReader::finish() {
  if (!closed_ && line_bytes_ > 0) end_line();
}

std::vector<Refusal> RequestReader::refused() const {
  std::vector<Refusal> all = refused_;
  if (beyond_.lines > 0) all.push_back(beyond_);
  if (closed_)
    all.push_back({"the channel carried more than " + std::to_string(limits_.channel_bytes) +
                       " bytes: closed, the rest not read",
                   bytes_read_, 0});
  return all;
}

void RequestReader::end_line() {
  const uint64_t bytes = line_bytes_;
  const bool nonblank = line_nonblank_;
  std::string line = std::move(line_);
  line_.clear();
  line_bytes_ = 0;
  line_nonblank_ = false;
  if (!nonblank) return;
  if (lines_ >= limits_.requests) {
    beyond_.lines += 1;
    beyond_.bytes += bytes;
    return;
  }
  ++lines_;
  if (bytes > limits_.bytes_per_request) {
    refused_.push_back(
        {"longer than " + std::to_string(limits_.bytes_per_request) + " bytes: not read past the limit",
         bytes, 1});
    return;
  }
  auto r = parse_data_request(line, request_id(requests_.size() + 1), limits_);
  if (!r) {
    refused_.push_back({r.error().what, bytes, 1});
    return;
  }
  requests_.push_back(std::move(*r));
}

}  // namespace airlock::requests
