// What the sandboxed code asks the gateway, parsed from the request head it
// sent (hostile input), and the head the gateway sends upstream instead. Pure:
// no sockets; every refusal is one line the gateway returns with a 400.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace airlock::egress {

inline constexpr size_t kMaxHeadBytes = 32 << 10;
inline constexpr size_t kMaxHeaders = 100;

struct ProxyRequest {
  std::string method;  // "CONNECT", "GET", ...
  std::string version;  // "HTTP/1.1" or "HTTP/1.0"
  std::string host;    // lower case; an IPv6 literal without brackets
  uint16_t port = 0;
  std::string target;  // origin form ("/path?query") for plain HTTP; "" for CONNECT
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  uint64_t content_length = 0;  // the request body the gateway forwards (never more)
  bool has_content_length = false;  // a Content-Length header was sent (the gateway writes its own)
  bool expect_continue =
      false;  // "Expect: 100-continue": the gateway answers it, the upstream never sees it
  std::vector<std::string> connection_tokens;  // what "Connection" names, normalised (header_key)
  bool connect() const { return method == "CONNECT"; }
  std::string path() const;  // target without the query
};

// Length of the head (through the blank line) at the start of `buffer`, 0 if
// it is not complete yet.
size_t head_length(std::string_view buffer);

// Refuses a bare LF, a CR not followed by LF, or a NUL in what has arrived of
// a head so far (a trailing CR may still get its LF), so a head that ends
// lines differently is refused at once, not after the head timeout.
Status check_line_ends(std::string_view partial_head);

// A header name as servers may read it: lower case, '_' as '-' (CGI, WSGI
// and some proxies map both to the same variable).
std::string header_key(std::string_view name);

// "CONNECT host:port HTTP/1.1" or "METHOD http://host[:port]/path HTTP/1.x",
// headers, blank line. Refuses: origin-form and https:// targets, user info,
// dot segments or encoded slashes and dots in the path (a path rule must mean
// what the upstream will serve); anything that could make the upstream frame
// the request differently from the gateway: Transfer-Encoding, more than one
// Content-Length, a Connection header naming Content-Length, Transfer-Encoding
// or Host, framing header names spelled with '_', folded lines, bare CR or LF;
// Upgrade (WebSocket, h2c: use CONNECT) and any Expect but 100-continue;
// malformed headers.
Result<ProxyRequest> parse_proxy_request(std::string_view head);

struct Credential {
  std::string header;  // e.g. "Authorization"
  std::string value;   // e.g. "Bearer ..."
};

// The head sent upstream for a plain HTTP request: origin-form target,
// hop-by-hop headers (and those Connection names), Expect, and any header
// named like the credential dropped; Host set from the target and
// Content-Length from the parsed length, both written by the gateway;
// "Connection: close", and the credential if given. With a credential,
// "Accept-Encoding: identity" too, so the gateway can keep the credential out
// of what comes back.
std::string upstream_head(const ProxyRequest& request, const std::optional<Credential>& credential);

// The gateway's own answer: status line, X-Airlock-Reason, a one-line body
// "airlock egress: <reason>", Connection: close.
std::string gateway_response(int status, std::string_view reason);

// "host:port" with brackets around IPv6 literals.
std::string authority(std::string_view host, uint16_t port);

}  // namespace airlock::egress
