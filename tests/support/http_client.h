// HTTP for tests: the service's own client (keep-alive requests, a
// Server-Sent Events reader; src/http/client.h), and a raw socket for
// requests no well-behaved client sends. Loopback only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/client.h"

namespace airlock::testing {

// The client itself is the airlock CLI's (src/http/client.h).
using api::Event;
using api::EventStream;
using api::HttpClient;
using api::Response;

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
