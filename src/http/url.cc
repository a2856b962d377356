#include "http/url.h"

#include <arpa/inet.h>

namespace airlock::api {

Result<ServerAddress> parse_server_url(std::string_view url) {
  const std::string_view scheme = "http://";
  if (url.substr(0, scheme.size()) != scheme)
    return fail("server URL \"" + std::string(url) + "\": only http:// is supported (loopback only)");
  std::string_view rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos || rest.find('@') != std::string_view::npos)
    return fail("server URL \"" + std::string(url) + "\": give only http://HOST:PORT");
  ServerAddress out;
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8470
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return fail("server URL \"" + std::string(url) + "\": unclosed [");
    out.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != ':') return fail("server URL \"" + std::string(url) + "\": bad port");
    if (!rest.empty()) port_text = rest.substr(1);
  } else {
    size_t colon = rest.rfind(':');
    out.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port_text = rest.substr(colon + 1);
  }
  out.port = 80;
  if (!port_text.empty() || rest.ends_with(":")) {
    if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port_text)) == 0 || std::stoi(std::string(port_text)) > 65535)
      return fail("server URL \"" + std::string(url) + "\": bad port");
    out.port = static_cast<uint16_t>(std::stoi(std::string(port_text)));
  }
  if (out.host == "localhost") out.host = "127.0.0.1";
  in_addr v4{};
  in6_addr v6{};
  bool loopback = false;
  if (::inet_pton(AF_INET, out.host.c_str(), &v4) == 1)
    loopback = (ntohl(v4.s_addr) >> 24) == 127;
  else if (::inet_pton(AF_INET6, out.host.c_str(), &v6) == 1)
    loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  if (!loopback)
    return fail("server URL \"" + std::string(url) +
                "\": the host must be a loopback address (127.0.0.1, [::1] or localhost); plain HTTP would "
                "carry the API key in clear");
  return out;
}

std::string percent_encode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace airlock::api
