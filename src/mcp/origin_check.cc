#include "mcp/origin_check.h"

#include <arpa/inet.h>

#include <cctype>

namespace airlock::mcp {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool valid_port(const std::string& p) {
  if (p.empty() || p.size() > 5) return false;
  for (char c : p)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return std::stoi(p) <= 65535;
}

}  // namespace

bool is_loopback_host(const std::string& host_and_port) {
  std::string h = lower(host_and_port);
  std::string host = h;
  if (!h.empty() && h[0] == '[') {
    auto close = h.find(']');
    if (close == std::string::npos) return false;
    host = h.substr(1, close - 1);
    std::string rest = h.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || !valid_port(rest.substr(1)))) return false;
    return host == "::1";
  }
  if (h == "::1") return true;
  auto colon = h.find(':');
  if (colon != std::string::npos) {
    if (!valid_port(h.substr(colon + 1))) return false;
    host = h.substr(0, colon);
  }
  if (host == "localhost") return true;
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) != 1) return false;
  return (ntohl(a.s_addr) >> 24) == 127;
}

bool origin_allowed(const std::string& origin) {
  if (origin.empty()) return true;
  std::string o = lower(origin);
  std::string rest;
  if (o.rfind("http://", 0) == 0) {
    rest = o.substr(7);
  } else if (o.rfind("https://", 0) == 0) {
    rest = o.substr(8);
  } else {
    return false;
  }
  if (rest.find_first_of("/?#@") != std::string::npos) return false;
  return is_loopback_host(rest);
}

bool host_allowed(const std::string& host, bool listening_on_loopback) {
  if (!listening_on_loopback) return true;
  return is_loopback_host(host);
}

}  // namespace airlock::mcp
