// DNS-rebinding protection for the /mcp route, as the MCP transport spec
// asks of local servers: a browser page of another site must not reach
// the server through a name that resolves to 127.0.0.1. Pure.
#pragma once

#include <string>

namespace airlock::mcp {

// "localhost", "127.x.y.z", "[::1]" or "::1", with or without ":port".
bool is_loopback_host(const std::string& host_and_port);

// An Origin header is allowed when absent (not a browser) or when its host
// is a loopback name ("http://localhost:5173"). "null" and any other origin
// are refused.
bool origin_allowed(const std::string& origin);

// The Host header of a server that listens on loopback must name loopback
// too; a server listening elsewhere takes any Host.
bool host_allowed(const std::string& host, bool listening_on_loopback);

}  // namespace airlock::mcp
