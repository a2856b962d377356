// One message with file descriptors over a unix socket (SCM_RIGHTS): how a
// prepared sandbox (its pidfd, sync socket, pipes and mounts) moves between
// airlock processes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sys {

inline constexpr size_t kMaxPassedFds = 32;

Status send_with_fds(int sock, std::string_view bytes, const std::vector<int>& fds);

struct Received {
  std::string bytes;  // empty with no fds: the peer closed the connection
  std::vector<UniqueFd> fds;
};

// Receives one message of at most `max_bytes`. A truncated message or more
// fds than kMaxPassedFds is an error (and the fds that came are closed).
Result<Received> recv_with_fds(int sock, size_t max_bytes);

}  // namespace airlock::sys
