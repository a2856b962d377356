// MCP over stdio: newline-delimited JSON-RPC on stdin/stdout. Tool calls
// run on a thread each (at most kMaxStdioCalls at once) so that a
// notifications/cancelled or a ping is read while a call runs; everything
// written to stdout is a whole JSON-RPC message, logs go to stderr.
#pragma once

#include "mcp/api_backend.h"

namespace airlock::mcp {

inline constexpr size_t kMaxStdioCalls = 16;

// Serves until stdin ends; calls still running then finish and answer
// first. Returns the exit status.
int serve_stdio(const ApiTarget& target, int in_fd, int out_fd);

}  // namespace airlock::mcp
