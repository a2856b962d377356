// The HTTP/1.1 server of `airlock serve`: routes, JSON errors, request
// bodies in memory or spooled to a file, file responses, Server-Sent Events.
// Boost.Beast on a small pool of Asio threads; no thread per connection, so
// slow clients and long event streams cost a socket and a little memory each.
// See docs/http.md. Beast stays out of this header (a pimpl), so code that
// registers routes compiles without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::api {

struct HttpRequest {
  std::string method;                          // "GET", ...
  std::string target;                          // the request target as received ("/v1/x?a=%20")
  std::string path;                            // decoded path without query
  std::map<std::string, std::string> query;    // decoded query params (last wins)
  std::map<std::string, std::string> params;   // from the route pattern, e.g. {id}
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string body;       // the whole body, when the route does not spool it
  std::string body_file;  // path of the spooled body, when RouteOptions::spool_body
  // RouteOptions::stream_body: the body is still on the wire; Exchange::read_body reads it.
  bool body_streamed = false;
  uint64_t body_bytes = 0;  // its size; when streamed, the declared Content-Length (0 if chunked)
  std::string remote;  // "127.0.0.1:54321"

  std::string header(const std::string& lower_name) const;  // "" if absent
};

struct HttpResponse {
  int status = 200;
  // Content-Type is set by the helpers below. Content-Length, Transfer-Encoding
  // and Connection are the server's; a header with CR, LF or NUL is dropped.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string file;  // if non-empty: this file's contents are the body, streamed from disk
  // Or an open regular file, sent from its current offset to its end (wins over `file`).
  std::shared_ptr<UniqueFd> file_fd;

  static HttpResponse json(int status, const nlohmann::json& body);
  // {"error":{"code":..,"message":..}}
  static HttpResponse error(int status, const std::string& code, const std::string& message);
};

// One request/response exchange. Handlers run on an I/O thread and must not
// block: they answer at once, or keep the Exchange and answer later from any
// thread. Every method is thread-safe. An Exchange released without an answer
// gets a 500; an event stream released without end_events() is ended.
// After HttpServer::stop() every method is a harmless no-op.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual const HttpRequest& request() const = 0;
  // Exactly once; later calls (and calls after start_events) are ignored.
  virtual void respond(HttpResponse response) = 0;
  // Server-Sent Events: 200 + text/event-stream (chunked), then events, then end.
  virtual void start_events() = 0;
  // Queued, sent in order. `data` may contain newlines (one data: line each).
  // Ignored before start_events() or after end_events(). A client that lets
  // more than ServerOptions::max_event_backlog_bytes pile up is disconnected.
  virtual void send_event(const std::string& id, const std::string& event,
                          const std::string& data) = 0;
  // Sends what is queued, then ends the stream; the connection stays open
  // for the next request if the client asked for keep-alive.
  virtual void end_events() = 0;
  // The client went away (or the server stopped) before the exchange finished.
  virtual bool closed() const = 0;
  // Called once, on an I/O thread, when the exchange is over: the connection
  // closed before it finished, or its response / event stream was completely
  // written. Registered after that, it is called at once on the caller's thread.
  virtual void on_close(std::function<void()> callback) = 0;

  // A response whose body the handler writes piece by piece (a proxy passing
  // an answer on as it arrives), instead of respond(). `head` gives the status
  // and headers (its body and file are ignored); `length` the body's size if
  // known (Content-Length; the connection is cut if fewer bytes come), else
  // the body is chunked.
  virtual void start_body(HttpResponse head, std::optional<uint64_t> length) = 0;
  // Queues bytes of that body; never blocks (pace it with wait_writable).
  // Ignored before start_body() or after end_body().
  virtual void write_body(std::string_view bytes) = 0;
  // Sends what is queued, then ends the body. `complete` false (the source
  // broke): the connection is cut instead, so the client sees a short answer
  // rather than a whole one.
  virtual void end_body(bool complete = true) = 0;
  // Blocks until at most `max_unsent` bytes of the streamed body or event
  // stream are still to be written to the client (queued or being written);
  // false once the exchange is closed. A client that reads nothing is cut by
  // idle_timeout_ms, which ends the wait. From a handler's own thread only,
  // never from an I/O thread.
  virtual bool wait_writable(size_t max_unsent) = 0;
  // With RouteOptions::stream_body: the next piece of the request body, at
  // most `cap` bytes, read from the socket only now, so the client sends no
  // faster than the handler consumes. 0 at its end (at once when the request
  // has no body: then request().body_streamed is false). Blocks: from a handler's
  // own thread only. An error when the client left, the body is malformed,
  // longer than max_body_bytes or late (body_timeout_ms); the server then has
  // answered or closed the connection itself.
  virtual Result<size_t> read_body(char* buf, size_t cap) = 0;
};

using Route = std::function<void(std::shared_ptr<Exchange>)>;

struct RouteOptions {
  uint64_t max_body_bytes = 1 << 20;
  // For a request with a body: runs on the I/O thread once the header is
  // routed, before any body byte is read. A response it returns is sent
  // instead (the body is never read; the connection closes), so a client that
  // may not use the route cannot make the server hold its body (authentication).
  std::function<std::optional<HttpResponse>(const HttpRequest&)> before_body;
  // Stream the body to a new file in ServerOptions::spool_dir (request.body_file).
  // It is removed after the response is sent (and when the Exchange is
  // released), unless the handler renamed it before responding.
  bool spool_body = false;
  // Or leave it on the wire: the handler runs once the header is routed and
  // reads the body with Exchange::read_body (a proxy streaming an upload on).
  // A handler that answers before reading it all closes the connection.
  bool stream_body = false;
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: ephemeral
  int threads = 2;
  std::string spool_dir;  // required if a route spools its body
  uint64_t max_header_bytes = 16 << 10;
  int header_timeout_ms = 10000;  // from connect / the first byte to the end of the header
  int body_timeout_ms = 60000;    // for the whole body; slow clients are cut
  int idle_timeout_ms = 60000;    // keep-alive wait between requests; a write without progress
  // Open connections at most. A new connection beyond it closes the one that
  // has waited longest for a complete request header (idle keep-alive or a
  // partial header); only when every connection is inside a request does
  // the new one get 503 and close.
  size_t max_connections = 1024;
  // Descriptors that connections leave to the rest of the program (a
  // service's running jobs and open sessions): a new connection that would
  // leave fewer than this under RLIMIT_NOFILE gets 503 and closes at once,
  // whatever max_connections allows (descriptor_gate.h). 0: no such check.
  uint64_t descriptor_reserve = 0;
  // One JSON object per request (method, path, status, duration, bytes, remote, error).
  std::function<void(const nlohmann::json&)> access_log;
  uint64_t max_event_backlog_bytes = 8 << 20;  // unsent SSE data per connection
  // An event stream with nothing to send for this long gets the comment
  // ": keep-alive" (0: never), so clients can tell silence from a dead link.
  int event_keepalive_ms = 15000;
  // Runs on the I/O thread for every request once its header is parsed,
  // before routing (so it also hides which paths exist): a response it
  // returns is sent instead, the body never read (the connection then
  // closes). Empty: every request is routed. Request has method, target,
  // path, query, headers and remote; no params.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> gate;
};

class HttpServer {
 public:
  explicit HttpServer(ServerOptions options);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Pattern like "/v1/jobs/{id}/events"; before start(). A bad or duplicate
  // pattern is a programming error and aborts.
  void route(const std::string& method, const std::string& pattern, Route handler,
             RouteOptions options = {});
  Result<uint16_t> start();  // binds, starts threads; returns the bound port
  // Closes the listener and every connection, joins the threads. Not from a
  // handler (an I/O thread).
  void stop();

  struct Core;  // shared with connections (http_connection.h)

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace airlock::api
