// A listening socket made inside another process's network namespace. The
// socket stays in that namespace for its whole life, whichever thread or
// namespace later accepts on it: this is how the egress gateway, running on
// the host, becomes the one thing a job can reach (docs/egress.md).
#pragma once

#include <cstdint>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sys {

// TCP, non-blocking, 127.0.0.1:`port` in the network namespace of the process
// behind `pidfd`. Done on a short-lived thread that enters the namespace with
// setns(pidfd, CLONE_NEWNET), so no thread of the caller changes namespace.
// Needs CAP_SYS_ADMIN over that namespace (root on the host).
Result<UniqueFd> listen_in_netns(int pidfd, uint16_t port, int backlog = 128);

}  // namespace airlock::sys
