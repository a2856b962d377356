#include "egress/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "sys/file_io.h"

namespace airlock::egress {
namespace {

bool is_ip(const std::string& text) {
  in_addr v4{};
  in6_addr v6{};
  return ::inet_pton(AF_INET, text.c_str(), &v4) == 1 || ::inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

Result<std::vector<std::string>> lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) return fail("cannot resolve " + host + ": " + ::gai_strerror(rc));
  std::vector<std::string> out;
  for (addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* src = a->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && ::inet_ntop(a->ai_family, src, text, sizeof(text)))
      if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  ::freeaddrinfo(found);
  if (out.empty()) return fail("cannot resolve " + host + ": no address");
  return out;
}

}  // namespace

Result<HostOverrides> parse_host_overrides(std::string_view text) {
  HostOverrides out;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string address, name;
    if (!(words >> address)) continue;
    std::string at = "line " + std::to_string(number) + ": ";
    if (!is_ip(address)) return fail(at + "'" + address + "' is not an IP address");
    bool any = false;
    while (words >> name) {
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (!std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; }))
        return fail(at + "'" + name + "' is not a host name");
      auto& list = out[name];
      if (std::find(list.begin(), list.end(), address) == list.end()) list.push_back(address);
      any = true;
    }
    if (!any) return fail(at + "an address without a name");
  }
  return out;
}

Result<HostOverrides> load_host_overrides(const std::string& path) {
  auto text = sys::read_file(path);
  if (!text) return fail_with("read the egress hosts file " + path, text.error().err);
  auto parsed = parse_host_overrides(*text);
  if (!parsed) return fail(path + ": " + parsed.error().what);
  return parsed;
}

Result<Resolved> resolve_checked(const HostOverrides& overrides, const Rule& rule, const std::string& host) {
  std::vector<std::string> candidates;
  if (auto it = overrides.find(host); it != overrides.end()) {
    candidates = it->second;
  } else if (is_ip(host)) {
    candidates = {host};
  } else {
    auto found = lookup(host);
    if (!found) return std::unexpected(found.error());
    candidates = std::move(*found);
  }
  Resolved out;
  for (const auto& address : candidates) {
    Decision d = check_address(rule, address);
    if (d.allowed) out.addresses.push_back(address);
    else if (out.reason.empty()) out.reason = d.reason;
  }
  return out;
}

}  // namespace airlock::egress
