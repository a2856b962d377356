// Internals of the HTTP server shared by server.cc and connection.cc: the
// server's core state, one connection, one exchange. Only these two files
// (and the eviction unit test) include Beast.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// GCC 12 reports a false -Warray-bounds deep inside Asio's service registry
// (io_context::use_service); only the two files that include this header see it.
#pragma GCC diagnostic ignored "-Warray-bounds"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "http/routing.h"
#include "http/descriptor_gate.h"
#include "http/server.h"
#include "base/unique_fd.h"

namespace airlock::api {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

class Connection;

struct RouteEntry {
  Route handler;
  RouteOptions options;
};

// Owned by the server, every connection and every exchange, so the
// io_context outlives every socket, even one kept by a handler after stop().
struct HttpServer::Core {
  explicit Core(ServerOptions opts);

  ServerOptions options;
  net::io_context ioc;  // first: destroyed after the sockets below
  RouteTable table;
  std::vector<RouteEntry> routes;
  net::strand<net::io_context::executor_type> accept_strand;
  tcp::acceptor acceptor;
  net::steady_timer accept_retry;
  std::vector<std::thread> threads;
  bool started = false;

  std::mutex mutex;  // guards stopped, connections and evicting
  bool stopped = false;
  std::map<const Connection*, std::weak_ptr<Connection>> connections;
  size_t evicting = 0;  // connections told to close to make room, not yet gone
  // With options.descriptor_reserve: set at start(), used on the accept strand.
  std::optional<DescriptorGate> descriptor_gate;
  std::chrono::steady_clock::time_point descriptor_refusal_logged{};

  // Under `mutex`: marks the connection that has waited longest for a request
  // header as evicted; false if none waits. `to_close` is the connection to
  // close (null if it is already being destroyed).
  bool evict_oldest_waiting(std::shared_ptr<Connection>& to_close);

  // Posts `fn` to `ex` unless the server stopped (then it is dropped, after
  // the lock is released). Work from handler threads goes through here, so
  // nothing is queued on an io_context that no thread runs any more.
  template <class Executor, class Fn>
  bool post(const Executor& ex, Fn&& fn) {
    std::lock_guard lock(mutex);
    if (stopped) return false;
    net::post(ex, std::forward<Fn>(fn));
    return true;
  }

  void log(const nlohmann::json& line) const;
};

// A spooled request body; the file is removed when the last owner (the
// connection's current request, the handler's Exchange) lets go.
struct SpoolFile {
  std::string path;
  ~SpoolFile();
};

// What an exchange shares with its connection across threads.
struct ExchangeState {
  std::mutex mutex;
  std::condition_variable changed;  // a write completed, a body piece arrived, or over
  bool answered = false;   // respond(), start_events() or start_body() called
  bool streaming = false;  // start_events() called
  bool body = false;       // start_body() called
  bool ended = false;      // end_events() or end_body() called
  bool cut = false;        // end_body(false): close instead of ending the body
  bool over = false;       // finished or closed; callbacks ran
  bool flush_posted = false;
  std::string pending;    // framed events, or bytes of the streamed body, not yet written
  size_t in_flight = 0;   // bytes of `pending` the connection is writing now
  std::vector<std::function<void()>> callbacks;
  std::atomic<bool> closed{false};

  // A streamed request body (RouteOptions::stream_body): the piece read_body asked for.
  bool piece_ready = false;
  bool body_end = false;  // the whole request body was read
  std::string piece;
  std::string piece_error;
  // Hands the piece (or an error) to the thread waiting in read_body.
  void deliver(std::string bytes, bool end, std::string error);

  // Marks the exchange over and runs the callbacks (outside the lock).
  void finish(bool connection_closed);
};

class ExchangeImpl final : public Exchange {
 public:
  ExchangeImpl(std::shared_ptr<Connection> connection, std::shared_ptr<ExchangeState> state,
               std::shared_ptr<SpoolFile> spool, HttpRequest request);
  ~ExchangeImpl() override;

  const HttpRequest& request() const override { return request_; }
  void respond(HttpResponse response) override;
  void start_events() override;
  void send_event(const std::string& id, const std::string& event,
                  const std::string& data) override;
  void end_events() override;
  bool closed() const override { return state_->closed.load(); }
  void on_close(std::function<void()> callback) override;
  void start_body(HttpResponse head, std::optional<uint64_t> length) override;
  void write_body(std::string_view bytes) override;
  void end_body(bool complete) override;
  bool wait_writable(size_t max_unsent) override;
  Result<size_t> read_body(char* buf, size_t cap) override;

 private:
  std::shared_ptr<Connection> connection_;
  std::shared_ptr<ExchangeState> state_;
  std::shared_ptr<SpoolFile> spool_;
  HttpRequest request_;
};

// One client connection. Everything but the *_from() entry points runs on
// the connection's strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<HttpServer::Core> core, tcp::socket socket);
  ~Connection();

  net::any_io_executor executor() const { return strand_; }
  // When this connection started waiting for a request header (steady clock
  // ns; the accept, for its first request), 0 while it is inside a request,
  // kEvicted once the server chose it to make room. Read from the accept
  // thread under Core::mutex.
  static constexpr int64_t kEvicted = -1;
  std::atomic<int64_t> waiting_since{0};
  void start();
  void close(const char* reason);

  // From any thread (an Exchange): posted to the strand.
  void respond_from(std::shared_ptr<ExchangeState> state, HttpResponse response,
                    std::string error);
  void start_events_from(std::shared_ptr<ExchangeState> state);
  void flush_from(std::shared_ptr<ExchangeState> state);
  void close_from(const char* reason);
  void start_body_from(std::shared_ptr<ExchangeState> state, HttpResponse head, std::optional<uint64_t> length);
  // Reads the next piece of a streamed request body (at most `cap` bytes) and
  // delivers it to `state`.
  void read_body_from(std::shared_ptr<ExchangeState> state, size_t cap);
  uint64_t max_event_backlog() const { return core_->options.max_event_backlog_bytes; }
  bool server_stopped() const;

 private:
  // kStreaming: a body the handler writes piece by piece (start_body).
  enum class Phase { kIdle, kHeader, kBody, kHandling, kResponding, kEvents, kStreaming, kLinger, kClosed };

  // Per request, for the access log and the response.
  struct Info {
    bool started = false;  // the header was parsed
    std::chrono::steady_clock::time_point start;
    std::string method, path;
    int status = 0;
    uint64_t bytes_in = 0, bytes_out = 0;
    std::string error;
    unsigned version = 11;
    bool keep_alive = false;
  };

  void start_waiting();  // for the next request header: evictable from now on
  bool stop_waiting();   // the header is complete; false if evicted meanwhile
  void next_request();
  void read_some();
  void on_read_some(beast::error_code ec, size_t n);
  void read_header();
  void on_header(beast::error_code ec);
  void read_body();
  void on_body(beast::error_code ec);
  void dispatch();

  void send(HttpResponse response, bool close_after, bool linger);
  // An error answer from the server itself; closes the connection unless keep_alive.
  void reply_error(int status, const std::string& code, const std::string& message, bool linger,
                   bool keep_alive = false);
  template <class Message>
  void fill_headers(Message& message, const HttpResponse& response);
  void write_string(std::shared_ptr<http::response<http::string_body>> message);
  void write_serialized(std::shared_ptr<http::response<http::string_body>> message,
                        std::shared_ptr<http::response_serializer<http::string_body>> serializer);
  void write_file_step(std::shared_ptr<std::vector<char>> chunk, uint64_t remaining);
  void on_response_written();
  void start_events();
  // Writes head_ (its serializer kept in head_serializer_) under the idle
  // deadline, then calls `pump`; a failed write is `closed`'s reason.
  void write_head_then(const char* closed, void (Connection::*pump)());
  void pump_events();
  void start_body(HttpResponse head, std::optional<uint64_t> length);
  void pump_body();
  void read_body_piece(std::shared_ptr<ExchangeState> state, size_t cap);
  void on_body_piece(std::shared_ptr<ExchangeState> state, beast::error_code ec);
  void arm_keepalive();
  void finish_request(bool connection_closed);
  void log_request();

  void arm(int ms);
  void disarm();
  // The end of a response or event write: counts the bytes; false when the
  // connection is closed or the write failed (then it is closed with `reason`).
  bool write_completed(beast::error_code ec, size_t bytes, const char* reason);
  void linger();

  std::shared_ptr<HttpServer::Core> core_;  // first: outlives the socket and timer
  net::any_io_executor strand_;
  tcp::socket socket_;
  net::steady_timer timer_;
  uint64_t deadline_gen_ = 0;
  net::steady_timer keepalive_timer_;  // event streams: a comment after a silence
  uint64_t keepalive_gen_ = 0;
  beast::flat_buffer buffer_;
  std::string remote_;

  Phase phase_ = Phase::kIdle;
  bool reading_ = false;  // a read is outstanding on the socket
  bool writing_ = false;  // a write is outstanding
  bool rearm_on_first_byte_ = false;
  bool close_after_ = false;
  bool linger_after_ = false;
  uint64_t lingered_bytes_ = 0;

  std::optional<http::request_parser<http::empty_body>> header_parser_;
  std::optional<http::request_parser<http::string_body>> string_parser_;
  std::optional<http::request_parser<http::file_body>> file_parser_;
  // A streamed request body: its parser, and whether the handler still reads it.
  std::optional<http::request_parser<http::buffer_body>> body_parser_;
  bool body_streaming_ = false;
  std::string body_piece_;
  size_t route_ = 0;
  HttpRequest request_;
  Info info_;
  std::shared_ptr<SpoolFile> spool_;
  bool spool_done_ = false;  // the body is complete (handed to the handler)
  std::shared_ptr<ExchangeState> current_;

  // Responses from a file, and event streams.
  UniqueFd file_;
  std::shared_ptr<http::response<http::empty_body>> head_;
  std::shared_ptr<http::response_serializer<http::empty_body>> head_serializer_;
  // A streamed response body: its declared length (none: chunked) and what went out.
  std::optional<uint64_t> body_length_;
  uint64_t body_sent_ = 0;
};

}  // namespace airlock::api
