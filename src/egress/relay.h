// Moving bytes for the gateway: connect with a deadline, send with a
// deadline, and the two-way relay (splice through pipes, no copy through
// user space). Every wait also watches the gateway's stop fd, so stopping the
// gateway ends every connection at once. Sockets here are non-blocking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::egress {

enum class Ready { kYes, kStopped, kTimedOut };
// poll() on `fd` for `events` and on `stop_fd`; timeout_ms < 0 waits forever.
Ready wait_ready(int fd, short events, int stop_fd, int timeout_ms);

// A non-blocking TCP connection to `ip`:`port` (IPv4 or IPv6 text).
Result<UniqueFd> connect_tcp(const std::string& ip, uint16_t port, int stop_fd, int timeout_ms);

// Writes all of `data`; fails on a peer that stops reading for `timeout_ms`.
Status send_all(int fd, std::string_view data, int stop_fd, int timeout_ms);

// Reads what is there (waiting up to `timeout_ms` for something); 0 at EOF.
Result<size_t> recv_some(int fd, char* buf, size_t size, int stop_fd, int timeout_ms);

struct RelayCounts {
  uint64_t up = 0;    // client -> upstream
  uint64_t down = 0;  // upstream -> client
};

struct RelayOptions {
  // Forward at most this many bytes from the client (a request body), then
  // stop reading it; nullopt: until the client's EOF (a tunnel).
  std::optional<uint64_t> up_limit;
  int idle_timeout_ms = 60'000;
};

// Relays both ways until the upstream is done sending and either the client
// is done sending or its limit is reached, a side fails, the relay idles, or
// the stop fd fires. An EOF is passed on as a half-close.
Status relay(int client, int upstream, int stop_fd, const RelayOptions& options, RelayCounts& counts);

}  // namespace airlock::egress
