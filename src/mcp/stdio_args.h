// `airlock mcp`'s command line. Pure: the caller reads the key file and
// the environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace airlock::mcp {

struct StdioArgs {
  std::optional<std::string> url, key_file;
  int event_keepalive_ms = 15000;
  bool help = false;
};

// A key on the command line (--key, --api-key, --token, ...) is refused:
// other users see a process's arguments in /proc/PID/cmdline and `ps`.
Result<StdioArgs> parse_stdio_args(const std::vector<std::string>& args);

}  // namespace airlock::mcp
