// URLs as the command-line client needs them: where the server is, and
// query values encoded. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace airlock::api {

struct ServerAddress {
  std::string host;  // an IP address literal ("localhost" becomes 127.0.0.1)
  uint16_t port = 0;
};

// "http://HOST[:PORT][/]" with HOST a loopback address (127.0.0.0/8, [::1],
// localhost): plain HTTP carries the API key in clear, so nothing else.
// The port defaults to 80.
Result<ServerAddress> parse_server_url(std::string_view url);

// Every byte but A-Z a-z 0-9 - . _ ~ as %XX: safe in a path segment or a
// query value ("/" too is encoded).
std::string percent_encode(std::string_view text);

}  // namespace airlock::api
