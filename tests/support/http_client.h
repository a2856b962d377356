// HTTP for tests: the service's own client (keep-alive requests, a
// Server-Sent Events reader; src/http/client.h), and a raw socket for
// requests no well-behaved client sends. Loopback only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "http/client.h"

namespace airlock::testing {

using api::Event;
using api::EventStream;
using api::Response;

// What an error answer must never carry (docs/errors.md "What a client
// sees"): SQL, the store's or a library's own messages, the service's host
// paths. Pure: the reason, or nullopt for an answer that is not an error or
// says nothing internal.
std::optional<std::string> leaked_internal_text(const Response& r);

// The airlock CLI's own client (src/http/client.h), which checks every error
// answer it receives with leaked_internal_text() and fails the running test
// on a leak: every test that talks HTTP through it is part of the check.
class HttpClient : public api::HttpClient {
 public:
  using api::HttpClient::HttpClient;
  Response request(const std::string& method, const std::string& target, const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {});
};

// A plain TCP connection for malformed, slow or partial requests.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool send(std::string_view bytes);  // false if the connection is gone
  // Everything that arrives until the server closes, or until timeout_ms.
  std::string read_until_close(int timeout_ms);
  // Reads until `needle` has arrived (or close/timeout); returns all read so far.
  std::string read_until(std::string_view needle, int timeout_ms);
  // Whether the server closed the connection within timeout_ms (data is discarded).
  bool closed_within(int timeout_ms);

 private:
  int fd_ = -1;
  std::string pending_;
  bool peer_closed_ = false;
};

}  // namespace airlock::testing
