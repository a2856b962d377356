// The listener and the thread pool: accept connections (up to a limit),
// hand each to its own strand, stop everything on request.
#include "http/server.h"

#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "http/connection.h"
#include "base/check.h"

namespace airlock::api {
namespace {

constexpr int kAcceptRetryMs = 100;  // after accept fails (out of fds): do not spin
// Evicted connections close on their own strands, soon; this many may be on
// their way out while new ones are already admitted in their place.
constexpr size_t kMaxEvicting = 64;

// Over max_connections: one best-effort answer on the non-blocking socket, then close.
void refuse(tcp::socket socket) {
  static const std::string kBusy =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nRetry-After: 1\r\nContent-Length: 74\r\n\r\n"
      "{\"error\":{\"code\":\"busy\",\"message\":\"too many connections, retry later\"}}\n";
  beast::error_code ec;
  socket.non_blocking(true, ec);
  socket.write_some(net::buffer(kBusy), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

void accept_next(std::shared_ptr<HttpServer::Core> core);

void on_accept(std::shared_ptr<HttpServer::Core> core, beast::error_code ec, tcp::socket socket) {
  if (!core->acceptor.is_open()) return;  // stopped
  if (ec) {
    core->log({{"msg", "http accept failed"}, {"error", ec.message()}});
    core->accept_retry.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
    core->accept_retry.async_wait([core](beast::error_code wec) {
      if (!wec) accept_next(core);
    });
    return;
  }
  std::shared_ptr<Connection> connection, evicted;
  bool busy = false;
  {
    std::lock_guard lock(core->mutex);
    if (core->stopped) return;  // the socket closes as it goes out of scope
    size_t open = core->connections.size();
    if (core->descriptor_gate && !core->descriptor_gate->admit(std::chrono::steady_clock::now())) {
      // Keeping it would take descriptors reserved for the jobs and
      // sessions; evicting another would not give one back in time.
      busy = true;
      auto now = std::chrono::steady_clock::now();
      if (now - core->descriptor_refusal_logged >= std::chrono::seconds(1)) {  // one line a second at most
        core->descriptor_refusal_logged = now;
        core->log({{"msg", "connection refused: the descriptors left are reserved for jobs and sessions"},
                   {"refused", core->descriptor_gate->refused()},
                   {"reserve", core->options.descriptor_reserve}});
      }
    } else if (open - core->evicting >= core->options.max_connections) {
      // Full: make room by closing the connection that has waited longest
      // for a request header; never one inside a request.
      busy = core->evicting >= kMaxEvicting;
      if (!busy) busy = !core->evict_oldest_waiting(evicted);
    }
    if (!busy) {
      connection = std::make_shared<Connection>(core, std::move(socket));
      core->connections[connection.get()] = connection;
    }
  }
  if (evicted) {
    net::post(evicted->executor(),
              [evicted] { evicted->close("evicted while waiting for a request header"); });
  }
  if (busy) {
    refuse(std::move(socket));
  } else {
    net::post(connection->executor(), [connection] { connection->start(); });
  }
  accept_next(std::move(core));
}

void accept_next(std::shared_ptr<HttpServer::Core> core) {
  auto& acceptor = core->acceptor;
  auto strand = net::make_strand(core->ioc);  // before `core` is moved into the handler
  acceptor.async_accept(strand,
                        [core = std::move(core)](beast::error_code ec, tcp::socket socket) {
                          on_accept(core, ec, std::move(socket));
                        });
}

void run_io(HttpServer::Core* core) {
  while (true) {
    try {
      core->ioc.run();
      return;
    } catch (const std::exception& e) {
      // Handlers catch what they call; this is the last line, not a plan.
      core->log({{"msg", "http I/O thread caught an exception"}, {"error", e.what()}});
    }
  }
}

}  // namespace

HttpServer::Core::Core(ServerOptions opts)
    : options(std::move(opts)),
      ioc(std::max(1, options.threads)),
      accept_strand(net::make_strand(ioc)),
      acceptor(accept_strand),
      accept_retry(accept_strand) {}

bool HttpServer::Core::evict_oldest_waiting(std::shared_ptr<Connection>& to_close) {
  // A few tries: the chosen one may finish its header between the scan and the mark.
  for (int attempt = 0; attempt < 4; ++attempt) {
    Connection* oldest = nullptr;
    int64_t since = 0;
    for (const auto& [c, _] : connections) {
      int64_t s = c->waiting_since.load();
      if (s > 0 && (!oldest || s < since)) {
        oldest = const_cast<Connection*>(c);
        since = s;
      }
    }
    if (!oldest) return false;
    if (oldest->waiting_since.compare_exchange_strong(since, Connection::kEvicted)) {
      ++evicting;
      // Null when it is already going (its destructor waits for this lock
      // and counts it out); the room it leaves is real all the same.
      to_close = connections[oldest].lock();
      return true;
    }
  }
  return false;
}

void HttpServer::Core::log(const nlohmann::json& line) const {
  if (!options.access_log) return;
  try {
    options.access_log(line);
  } catch (...) {
    // A failing logger must not fail the request.
  }
}

HttpServer::HttpServer(ServerOptions options)
    : core_(std::make_shared<Core>(std::move(options))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(const std::string& method, const std::string& pattern, Route handler,
                       RouteOptions options) {
  AIRLOCK_CHECK(!core_->started);
  auto index = core_->table.add(method, pattern);
  if (!index) {
    std::fprintf(stderr, "airlock: bad HTTP route %s %s: %s\n", method.c_str(), pattern.c_str(),
                 index.error().message().c_str());
    std::abort();
  }
  AIRLOCK_CHECK(*index == core_->routes.size());
  core_->routes.push_back(RouteEntry{std::move(handler), options});
}

Result<uint16_t> HttpServer::start() {
  Core& core = *core_;
  if (core.started) return fail("HTTP server already started");
  for (const RouteEntry& r : core.routes) {
    if (!r.options.spool_body) continue;
    struct stat st {};
    if (core.options.spool_dir.empty() || ::stat(core.options.spool_dir.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      return fail("HTTP spool directory '" + core.options.spool_dir +
                  "' is not a directory (a route spools its body)");
    }
    break;
  }
  if (core.options.descriptor_reserve > 0) {
    rlimit nofile{};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
      core.descriptor_gate.emplace(nofile.rlim_cur, core.options.descriptor_reserve);
  }
  beast::error_code ec;
  net::ip::address address = net::ip::make_address(core.options.address, ec);
  if (ec) return fail("bad listen address '" + core.options.address + "'");
  tcp::endpoint endpoint(address, core.options.port);
  std::string where = core.options.address + ":" + std::to_string(core.options.port);
  if (core.acceptor.open(endpoint.protocol(), ec); ec) {
    return fail_with("open a socket for " + where, ec.value());
  }
  core.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (core.acceptor.bind(endpoint, ec); ec) {
    core.acceptor.close(ec);
    return fail_with("bind " + where, ec.value());
  }
  if (core.acceptor.listen(net::socket_base::max_listen_connections, ec); ec) {
    core.acceptor.close(ec);
    return fail_with("listen on " + where, ec.value());
  }
  uint16_t port = core.acceptor.local_endpoint(ec).port();
  core.started = true;
  accept_next(core_);
  for (int i = 0; i < std::max(1, core.options.threads); ++i) {
    core.threads.emplace_back(run_io, core_.get());
  }
  return port;
}

void HttpServer::stop() {
  Core& core = *core_;
  if (!core.started || core.threads.empty()) return;
  for (const std::thread& t : core.threads) AIRLOCK_CHECK(t.get_id() != std::this_thread::get_id());
  std::vector<std::weak_ptr<Connection>> open;
  {
    std::lock_guard lock(core.mutex);
    core.stopped = true;
    for (const auto& [_, weak] : core.connections) open.push_back(weak);
  }
  net::post(core.accept_strand, [core = core_] {
    beast::error_code ec;
    core->acceptor.close(ec);
    core->accept_retry.cancel();
  });
  for (const auto& weak : open) {
    if (auto connection = weak.lock()) {
      net::post(connection->executor(), [connection] { connection->close("server stopping"); });
    }
  }
  // With the listener and every socket closed, the threads run out of work.
  for (std::thread& t : core.threads) t.join();
  core.threads.clear();
}

}  // namespace airlock::api
