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
// One running job in the service (not in its sandbox): its sandbox's
// pidfd, sync socket, output pipes, five mounts, cgroup, the locks of its
// directory and uid lease (19 measured while it runs), then the record,
// outputs and checks it reads.
inline constexpr uint64_t kDescriptorsPerJob = 32;
// One open session: the same sandbox descriptors and its stdin pipe (13
// measured), a file transfer.
inline constexpr uint64_t kDescriptorsPerSession = 16;
// One preloaded interpreter of the sessions (its control socket; a start
// briefly holds a few more).
inline constexpr uint64_t kDescriptorsPerInterpreter = 4;
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

// `interpreters`: the sessions' preloaded interpreters at most (one per
// tenant holding them, preloaded_tenants; 0 without a preloaded pool).
// `reserved` is also what the HTTP server leaves free whatever the
// connections (ServerOptions::descriptor_reserve): a connection is refused
// before it eats into it.
DescriptorBudget plan_descriptors(uint64_t limit, size_t max_running, size_t max_sessions,
                                  size_t configured_max_connections, size_t interpreters = 0);

}  // namespace airlock::service
