// MCP's Streamable HTTP transport at /mcp on `airlock serve`. POST carries
// one JSON-RPC message with a Bearer API key (the API's own keys); a tool
// call is answered as JSON, or as an SSE stream when it asked for progress.
// GET and DELETE answer 405: the server sends no messages of its own and
// keeps no transport session (a session of airlock is a tool argument).
// Tool calls run on the route's own threads, through the API on the
// service's loopback listener with the caller's key (api_backend.h); the
// I/O threads never wait for them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "http/server.h"
#include "mcp/in_flight.h"
#include "service/job_service.h"
#include "service/task_pool.h"

namespace airlock::mcp {

struct McpRouteOptions {
  std::string listen_address = "127.0.0.1";  // the service's; where tool calls connect
  // Tool calls running at once (each mostly waits on the API); more wait.
  size_t threads = 32;
  size_t max_calls = 128;  // in flight (running or waiting); more are refused
  int event_keepalive_ms = 15000;
};

class McpRoute {
 public:
  explicit McpRoute(McpRouteOptions options);
  ~McpRoute();  // finishes the calls under way (the server is stopped first)
  McpRoute(const McpRoute&) = delete;
  McpRoute& operator=(const McpRoute&) = delete;

  void install(api::HttpServer& server, service::JobService& service);
  void set_port(uint16_t port) { port_ = port; }  // once the server listens

 private:
  void post(const std::shared_ptr<api::Exchange>& ex, const service::Caller& caller);

  McpRouteOptions options_;
  std::atomic<uint16_t> port_{0};
  InFlight calls_;
  service::TaskPool pool_;
};

}  // namespace airlock::mcp
