#include "http/routing.h"

#include <algorithm>
#include <utility>

namespace airlock::api {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool valid_param_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_';
    if (!ok) return false;
  }
  return true;
}

// "/a/b" -> {"a", "b"}; "/" -> {""}; requires a leading '/'.
std::vector<std::string_view> split_raw(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 1;
  while (true) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(path.substr(start));
      return out;
    }
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// The lines of an SSE data field: split at \r\n, \n or \r.
std::vector<std::string_view> split_lines(std::string_view data) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\n' || data[i] == '\r') {
      lines.push_back(data.substr(start, i - start));
      if (data[i] == '\r' && i + 1 < data.size() && data[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  lines.push_back(data.substr(start));
  return lines;
}

std::string one_line(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '\r' && c != '\n') out += c;
  }
  return out;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::map<std::string, std::string>> parse_query(std::string_view raw_query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= raw_query.size()) {
    size_t amp = raw_query.find('&', start);
    if (amp == std::string_view::npos) amp = raw_query.size();
    std::string_view pair = raw_query.substr(start, amp - start);
    start = amp + 1;
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view raw_name = pair.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    auto name = percent_decode(raw_name, true);
    auto value = percent_decode(raw_value, true);
    if (!name || !value) return fail("malformed percent-escape in the query string");
    if (name->find('\0') != std::string::npos || value->find('\0') != std::string::npos) {
      return fail("NUL byte in the query string");
    }
    out[std::move(*name)] = std::move(*value);
  }
  return out;
}

Result<Target> parse_target(std::string_view target) {
  if (target.empty() || target[0] != '/') return fail("request target must start with '/'");
  size_t q = target.find('?');
  std::string_view raw_path = target.substr(0, q);
  std::string_view raw_query = q == std::string_view::npos ? "" : target.substr(q + 1);
  // A fragment is never sent by a client; treat '#' as the end of the query.
  if (size_t hash = raw_query.find('#'); hash != std::string_view::npos) {
    raw_query = raw_query.substr(0, hash);
  }
  Target out;
  auto path = percent_decode(raw_path);
  if (!path) return fail("malformed percent-escape in the path");
  if (path->find('\0') != std::string::npos) return fail("NUL byte in the path");
  out.path = std::move(*path);
  for (std::string_view raw : split_raw(raw_path)) {
    auto segment = percent_decode(raw);
    if (!segment) return fail("malformed percent-escape in the path");
    if (segment->find('/') != std::string::npos) return fail("encoded '/' in a path segment");
    out.segments.push_back(std::move(*segment));
  }
  auto query = parse_query(raw_query);
  if (!query) return std::unexpected(query.error());
  out.query = std::move(*query);
  return out;
}

Result<RoutePattern> RoutePattern::parse(std::string_view pattern) {
  if (pattern.empty() || pattern[0] != '/') return fail("route pattern must start with '/'");
  RoutePattern out;
  out.text_ = std::string(pattern);
  for (std::string_view part : split_raw(pattern)) {
    bool open = part.find('{') != std::string_view::npos;
    bool close = part.find('}') != std::string_view::npos;
    if (!open && !close) {
      out.parts_.emplace_back(part);
      out.literal_.push_back(true);
      continue;
    }
    if (part.size() < 2 || part.front() != '{' || part.back() != '}') {
      return fail("route pattern " + out.text_ + ": a parameter must be a whole segment");
    }
    std::string_view name = part.substr(1, part.size() - 2);
    if (!valid_param_name(name)) {
      return fail("route pattern " + out.text_ + ": bad parameter name");
    }
    for (size_t i = 0; i < out.parts_.size(); ++i) {
      if (!out.literal_[i] && out.parts_[i] == name) {
        return fail("route pattern " + out.text_ + ": parameter used twice");
      }
    }
    out.parts_.emplace_back(name);
    out.literal_.push_back(false);
  }
  return out;
}

std::optional<std::map<std::string, std::string>> RoutePattern::match(
    const std::vector<std::string>& segments) const {
  if (segments.size() != parts_.size()) return std::nullopt;
  std::map<std::string, std::string> params;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (literal_[i]) {
      if (segments[i] != parts_[i]) return std::nullopt;
    } else {
      if (segments[i].empty()) return std::nullopt;
      params[parts_[i]] = segments[i];
    }
  }
  return params;
}

Result<size_t> RouteTable::add(std::string method, std::string_view pattern) {
  auto parsed = RoutePattern::parse(pattern);
  if (!parsed) return std::unexpected(parsed.error());
  for (const Entry& e : routes_) {
    if (e.method == method && e.pattern.text() == parsed->text()) {
      return fail("route " + method + " " + parsed->text() + " registered twice");
    }
  }
  routes_.push_back(Entry{std::move(method), std::move(*parsed)});
  return routes_.size() - 1;
}

RouteTable::Lookup RouteTable::find(std::string_view method,
                                    const std::vector<std::string>& segments) const {
  Lookup out;
  std::vector<std::string> allowed;
  const std::vector<bool>* best_mask = nullptr;
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Entry& e = routes_[i];
    auto params = e.pattern.match(segments);
    if (!params) continue;
    if (e.method != method) {
      allowed.push_back(e.method);
      continue;
    }
    const std::vector<bool>& mask = e.pattern.literal_mask();
    if (best_mask == nullptr || mask > *best_mask) {
      best_mask = &mask;
      out.outcome = Outcome::kFound;
      out.index = i;
      out.params = std::move(*params);
    }
  }
  if (out.outcome == Outcome::kFound) return out;
  if (!allowed.empty()) {
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    out.outcome = Outcome::kMethodNotAllowed;
    for (size_t i = 0; i < allowed.size(); ++i) {
      if (i > 0) out.allow += ", ";
      out.allow += allowed[i];
    }
  }
  return out;
}

std::string format_event(std::string_view id, std::string_view event, std::string_view data) {
  std::string out;
  std::string clean_id = one_line(id);
  std::string clean_event = one_line(event);
  if (!clean_id.empty()) out += "id: " + clean_id + "\n";
  if (!clean_event.empty()) out += "event: " + clean_event + "\n";
  for (std::string_view line : split_lines(data)) {
    out += "data: ";
    out += line;
    out += '\n';
  }
  out += '\n';
  return out;
}

std::string loggable(std::string_view in, size_t max) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    if (c < 0x20 || c > 0x7e || c == '%') {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace airlock::api
