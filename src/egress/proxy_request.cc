#include "egress/proxy_request.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/strings.h"

namespace airlock::egress {
namespace {

std::string lower(std::string_view s) { return ascii_lower(s); }

bool iequal(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

bool is_token(std::string_view s) {
  static const std::string_view extra = "!#$%&'*+-.^_`|~";
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || extra.find(static_cast<char>(c)) != std::string_view::npos;
  });
}

// A DNS name of [a-z0-9-.] or an IP literal.
bool valid_host(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::string h(host);
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) return true;
  return std::all_of(h.begin(), h.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; }) &&
         h.front() != '.' && h.front() != '-' && h.find("..") == std::string::npos;
}

Result<uint16_t> parse_port(std::string_view text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return fail("bad port in the request target");
  unsigned long port = std::stoul(std::string(text));
  if (port == 0 || port > 65535) return fail("bad port in the request target");
  return static_cast<uint16_t>(port);
}

// "host", "host:port", "[v6]", "[v6]:port".
Status parse_authority(std::string_view text, bool port_required, ProxyRequest& out) {
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) return fail("bad IPv6 literal in the request target");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return fail("bad authority in the request target");
      port = rest.substr(1);
    }
    in6_addr v6{};
    if (::inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) return fail("bad IPv6 literal in the request target");
  } else {
    auto colon = text.rfind(':');
    host = text.substr(0, colon);
    if (colon != std::string_view::npos) port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return fail("an IPv6 literal must be in brackets");
  }
  if (text.find('@') != std::string_view::npos) return fail("user info in the request target is refused");
  if (!valid_host(host)) return fail("'" + std::string(host) + "' is not a host name");
  out.host = lower(host);
  if (port.empty()) {
    if (port_required) return fail("CONNECT needs HOST:PORT");
    out.port = 80;
    return {};
  }
  auto p = parse_port(port);
  if (!p) return std::unexpected(p.error());
  out.port = *p;
  return {};
}

// Path rules compare prefixes; a path the upstream would normalise to
// something else must never get that far.
Status check_path(std::string_view target) {
  if (target.empty() || target.front() != '/') return fail("the path must start with '/'");
  for (unsigned char c : target)
    if (c <= 0x20 || c >= 0x7f || c == '\\') return fail("the request target has a control, space, backslash or non-ASCII byte");
  if (target.find('#') != std::string_view::npos) return fail("a fragment in the request target is refused");
  std::string_view path = target.substr(0, target.find('?'));
  std::string l = lower(path);
  if (l.find("%2e") != std::string::npos || l.find("%2f") != std::string::npos || l.find("%5c") != std::string::npos ||
      l.find("%00") != std::string::npos)
    return fail("encoded '.', '/', '\\' or NUL in the path are refused");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg == "." || seg == "..") return fail("dot segments in the path are refused");
    start = end + 1;
  }
  if (path.find("//") != std::string_view::npos) return fail("empty path segments ('//') are refused");
  return {};
}

Status parse_target(std::string_view target, ProxyRequest& out) {
  if (out.connect()) return parse_authority(target, true, out);
  if (target.empty() || target.front() == '/')
    return fail("send the full URL (http://host/path): the gateway is an HTTP proxy");
  auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return fail("the request target is not a URL");
  std::string scheme = lower(target.substr(0, scheme_end));
  if (scheme == "https")
    return fail("https:// through the gateway: use CONNECT, or http:// for a destination the gateway speaks TLS to");
  if (scheme != "http") return fail("only http:// URLs and CONNECT are supported");
  std::string_view rest = target.substr(scheme_end + 3);
  auto slash = rest.find_first_of("/?");
  std::string_view auth = rest.substr(0, slash);
  if (auto st = parse_authority(auth, false, out); !st) return st;
  std::string path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (path.front() == '?') path.insert(path.begin(), '/');
  if (auto st = check_path(path); !st) return st;
  out.target = std::move(path);
  return {};
}

const std::set<std::string>& hop_by_hop() {
  static const std::set<std::string> names = {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
                                              "proxy-authenticate", "te", "trailer", "upgrade", "transfer-encoding",
                                              "host"};
  return names;
}

}  // namespace

std::string ProxyRequest::path() const { return target.substr(0, target.find('?')); }

size_t head_length(std::string_view buffer) {
  auto end = buffer.find("\r\n\r\n");
  return end == std::string_view::npos ? 0 : end + 4;
}

Result<ProxyRequest> parse_proxy_request(std::string_view head) {
  if (head.size() > kMaxHeadBytes) return fail("the request head is too large");
  if (head.size() < 4 || head.substr(head.size() - 4) != "\r\n\r\n") return fail("the request head is incomplete");
  head.remove_suffix(2);  // keep one CRLF to end the last line
  ProxyRequest r;
  auto line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  auto sp1 = line.find(' ');
  auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp1 == sp2) return fail("malformed request line");
  r.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!is_token(r.method)) return fail("malformed method");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return fail("only HTTP/1.0 and HTTP/1.1 are supported");
  if (auto st = parse_target(target, r); !st) return std::unexpected(st.error());

  std::optional<uint64_t> length;
  size_t pos = line_end + 2;
  while (pos < head.size()) {
    auto end = head.find("\r\n", pos);
    std::string_view h = head.substr(pos, end - pos);
    pos = end + 2;
    if (h.empty()) break;
    if (h.front() == ' ' || h.front() == '\t') return fail("folded header lines are refused");
    auto colon = h.find(':');
    if (colon == std::string_view::npos || !is_token(h.substr(0, colon))) return fail("malformed header line");
    std::string name(h.substr(0, colon));
    std::string_view value = h.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    for (unsigned char c : value)
      if ((c < 0x20 && c != '\t') || c == 0x7f) return fail("a control byte in header " + name);
    if (r.headers.size() >= kMaxHeaders) return fail("too many headers");
    if (iequal(name, "transfer-encoding"))
      return fail("Transfer-Encoding request bodies are not supported (send Content-Length)");
    if (iequal(name, "content-length")) {
      if (value.empty() || value.size() > 15 || value.find_first_not_of("0123456789") != std::string_view::npos)
        return fail("bad Content-Length");
      uint64_t n = std::stoull(std::string(value));
      if (length && *length != n) return fail("conflicting Content-Length headers");
      length = n;
    }
    r.headers.emplace_back(std::move(name), std::string(value));
  }
  if (r.connect() && length.value_or(0) != 0) return fail("CONNECT with a body");
  r.content_length = length.value_or(0);
  return r;
}

std::string authority(std::string_view host, uint16_t port) {
  bool v6 = host.find(':') != std::string_view::npos;
  return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::string upstream_head(const ProxyRequest& r, const std::optional<Credential>& credential) {
  std::set<std::string> drop = hop_by_hop();
  for (const auto& [name, value] : r.headers) {
    if (!iequal(name, "connection")) continue;
    size_t start = 0;
    while (start <= value.size()) {
      size_t end = value.find(',', start);
      if (end == std::string::npos) end = value.size();
      std::string token = value.substr(start, end - start);
      token.erase(0, token.find_first_not_of(" \t"));
      token.erase(token.find_last_not_of(" \t") + 1);
      // Never the body's framing: the gateway forwards exactly content_length
      // bytes, and an upstream without the header would read them as a new request.
      if (!token.empty() && lower(token) != "content-length") drop.insert(lower(token));
      start = end + 1;
    }
  }
  if (credential) {
    drop.insert(lower(credential->header));
    drop.insert("accept-encoding");
  }
  std::string out = r.method + " " + r.target + " HTTP/1.1\r\n";
  std::string host = authority(r.host, r.port);
  if (r.port == 80 || r.port == 443) host.resize(host.rfind(':'));  // the scheme's default port
  out += "Host: " + host + "\r\n";
  for (const auto& [name, value] : r.headers)
    if (!drop.count(lower(name))) out += name + ": " + value + "\r\n";
  if (credential) {
    out += credential->header + ": " + credential->value + "\r\n";
    out += "Accept-Encoding: identity\r\n";
  }
  out += "Connection: close\r\n\r\n";
  return out;
}

std::string gateway_response(int status, std::string_view reason) {
  std::string text;
  switch (status) {
    case 400: text = "Bad Request"; break;
    case 403: text = "Forbidden"; break;
    case 502: text = "Bad Gateway"; break;
    case 503: text = "Service Unavailable"; break;
    case 504: text = "Gateway Timeout"; break;
    default: text = "Error"; break;
  }
  std::string one_line(reason.substr(0, 512));
  std::replace_if(one_line.begin(), one_line.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
  std::string body = "airlock egress: " + one_line + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + text + "\r\nContent-Type: text/plain; charset=utf-8\r\n" +
         "X-Airlock-Reason: " + one_line + "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace airlock::egress
