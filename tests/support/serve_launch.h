// Starting an `airlock serve` for tests and benchmarks: stdout to a pipe,
// stderr to a log file, and its port read from the first line it prints,
// "airlock serve: listening on http://HOST:PORT (...)"; optionally inside a
// named network namespace.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace airlock::testing {

struct LaunchedServe {
  pid_t pid = -1;
  uint16_t port = 0;       // 0: it did not start (see first_line and the log)
  std::string first_line;  // what it printed first
};

// `argv` is the whole command line (argv[0] the airlock binary). The log is
// opened with O_WRONLY | O_CREAT | `log_flags` (O_APPEND or O_TRUNC) and `log_mode`.
// With `netns` set, the child enters /run/netns/NETNS (setns, nothing else)
// before exec: unlike `ip netns exec`, which remounts /sys in a mount namespace
// of its own and so hides the host's cgroup hierarchies from airlock.
LaunchedServe launch_serve(std::vector<std::string> argv, const std::string& log_path, int log_flags,
                           mode_t log_mode, const std::string& netns = "");

}  // namespace airlock::testing
