// How `airlock serve` shares its file descriptors (RLIMIT_NOFILE): a reserve
// for itself (store, logs, listener, pool), a share per running job and per
// open session, and what is left for HTTP connections. Pure: tested without
// a service.
#pragma once

#include <cstddef>
#include <cstdint>

namespace airlock::service {

// Held by the service itself whatever the load: SQLite and its WAL, the log,
// the listener, epoll and its wakeup, the warm pool's socket, spare.
inline constexpr uint64_t kServiceDescriptors = 64;
// One job in the service (not in its sandbox): the airlock run process's
// pipes and pidfd, then the record, outputs and checks it reads.
inline constexpr uint64_t kDescriptorsPerJob = 16;
// One open session: its kernel's pipes and pidfd, a file transfer.
inline constexpr uint64_t kDescriptorsPerSession = 8;
// One connection: its socket and a spooled body or a file being sent.
inline constexpr uint64_t kDescriptorsPerConnection = 2;
// However low the limit, this many connections are allowed, or nobody could
// reach the service at all.
inline constexpr size_t kMinConnections = 8;

struct DescriptorBudget {
  uint64_t reserved = 0;       // for the service, its jobs and sessions
  size_t max_connections = 0;  // the configured cap, lowered to fit the rest
  bool cramped = false;        // the limit leaves less than the configured cap
};

DescriptorBudget plan_descriptors(uint64_t limit, size_t max_running, size_t max_sessions,
                                  size_t configured_max_connections);

}  // namespace airlock::service
