// A listening socket made inside another process's network namespace. The
// socket stays in that namespace for its whole life, whichever thread or
// namespace later accepts on it: this is how the egress gateway, running on
// the host, becomes the one thing a job can reach (docs/egress.md).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sys {

// TCP, non-blocking, 127.0.0.1:`port` in the network namespace of the process
// behind `pidfd`. Done on a short-lived thread that enters the namespace with
// setns(pidfd, CLONE_NEWNET), so no thread of the caller changes namespace.
// Needs CAP_SYS_ADMIN over that namespace (root on the host).
Result<UniqueFd> listen_in_netns(int pidfd, uint16_t port, int backlog = 128);

// TCP, blocking, connected to IPv4 `address`:`port` from inside the network
// namespace `ns_fd` names (a pidfd, or an open /run/netns/NAME), within
// `timeout_ms`. The same short-lived thread as above makes the socket; the
// connection stays in that namespace whoever uses it afterwards.
Result<UniqueFd> connect_in_netns(int ns_fd, const std::string& address, uint16_t port, int timeout_ms = 5000);

}  // namespace airlock::sys
