// One HTTP/1.1 connection: read a header (bounded in size and time), route
// it, read or spool the body (bounded), hand an Exchange to the handler,
// write its response or event stream, and go round again for keep-alive.
//
// Every step runs on the connection's strand; handlers answer from any
// thread through ExchangeImpl, which posts to that strand. One deadline
// timer covers whatever the connection waits for; when it fires the socket
// is closed and the pending operation ends with an error.
#include "http/connection.h"
#include "base/strings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include <boost/asio/write.hpp>

namespace airlock::api {
namespace {

constexpr size_t kReadChunk = 16 << 10;
constexpr size_t kFileChunk = 64 << 10;
constexpr int kLingerMs = 2000;                // after an error, read and discard at most
constexpr uint64_t kLingerBytes = 4ull << 20;  // this long and this much, then close
// While a handler works, the connection keeps reading to notice a client that
// goes away; pipelined bytes are kept up to this much, then reading pauses.
size_t max_buffered(const ServerOptions& o) { return o.max_header_bytes + (64 << 10); }

std::string random_hex(size_t n) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += kHex[rng() & 15];
  return out;
}

std::string lower(std::string_view s) { return ascii_lower(s); }

bool header_safe(std::string_view s) {
  for (char c : s) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

// The client went away (or the server closed the socket): nothing to answer.
bool client_gone(beast::error_code ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::operation_aborted ||
         ec == net::error::bad_descriptor || ec == http::error::end_of_stream ||
         ec == http::error::partial_message;
}

// Why spooling a body failed, as the client hears it: 507 when the disk is
// full (nothing was kept; the client may retry later), else 500.
struct SpoolRefusal {
  int status;
  const char* code;
  const char* message;
};
SpoolRefusal spool_refusal(beast::error_code ec) {
  bool full = ec.category() == boost::system::system_category() && (ec.value() == ENOSPC || ec.value() == EDQUOT);
  if (full)
    return {507, "insufficient_storage", "the server's storage is full; nothing was stored, try again later"};
  return {500, "internal", "cannot store the request body"};
}

std::string endpoint_text(const tcp::socket& socket) {
  beast::error_code ec;
  tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  std::string addr = ep.address().to_string();
  if (ep.address().is_v6()) addr = "[" + addr + "]";
  return addr + ":" + std::to_string(ep.port());
}

}  // namespace

SpoolFile::~SpoolFile() {
  if (!path.empty()) ::unlink(path.c_str());  // ENOENT: the handler renamed it
}

void ExchangeState::finish(bool connection_closed) {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard lock(mutex);
    if (connection_closed) closed = true;
    if (over) return;
    over = true;
    pending.clear();
    run.swap(callbacks);
  }
  changed.notify_all();
  for (auto& callback : run) {
    try {
      callback();
    } catch (...) {
      // A callback's failure must not take the I/O thread down.
    }
  }
}

void ExchangeState::deliver(std::string bytes, bool end, std::string error) {
  {
    std::lock_guard lock(mutex);
    piece = std::move(bytes);
    body_end = body_end || end;
    if (piece_error.empty()) piece_error = std::move(error);
    piece_ready = true;
  }
  changed.notify_all();
}

// ---------------------------------------------------------------- Exchange

ExchangeImpl::ExchangeImpl(std::shared_ptr<Connection> connection,
                           std::shared_ptr<ExchangeState> state, std::shared_ptr<SpoolFile> spool,
                           HttpRequest request)
    : connection_(std::move(connection)),
      state_(std::move(state)),
      spool_(std::move(spool)),
      request_(std::move(request)) {}

ExchangeImpl::~ExchangeImpl() {
  bool unanswered = false, unended = false;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->over) return;
    if (!state_->answered) {
      state_->answered = true;
      unanswered = true;
    } else if ((state_->streaming || state_->body) && !state_->ended) {
      state_->ended = true;
      state_->cut = state_->body;  // a body released without end_body() is not whole
      unended = !state_->flush_posted;
      state_->flush_posted = true;
    }
  }
  if (unanswered) {
    connection_->respond_from(state_,
                              HttpResponse::error(500, "internal", "the handler did not respond"),
                              "handler released the exchange without a response");
  } else if (unended) {
    connection_->flush_from(state_);
  }
}

void ExchangeImpl::respond(HttpResponse response) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->answered || state_->over) return;
    state_->answered = true;
  }
  connection_->respond_from(state_, std::move(response), "");
}

void ExchangeImpl::start_events() {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->answered || state_->over) return;
    state_->answered = true;
    state_->streaming = true;
  }
  connection_->start_events_from(state_);
}

void ExchangeImpl::send_event(const std::string& id, const std::string& event,
                              const std::string& data) {
  std::string framed = format_event(id, event, data);
  bool post = false, overflow = false;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->streaming || state_->ended || state_->over) return;
    if (state_->pending.size() + framed.size() > connection_->max_event_backlog()) {
      overflow = true;
      state_->pending.clear();
    } else {
      state_->pending += framed;
      post = !state_->flush_posted;
      state_->flush_posted = true;
    }
  }
  if (overflow) {
    connection_->close_from("the client does not keep up with the event stream");
  } else if (post) {
    connection_->flush_from(state_);
  }
}

void ExchangeImpl::end_events() {
  bool start = false, post = false;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->over || state_->ended) return;
    if (!state_->answered) {
      state_->answered = true;
      state_->streaming = true;
      start = true;
    }
    if (!state_->streaming) return;  // respond() was used
    state_->ended = true;
    post = !state_->flush_posted;
    state_->flush_posted = true;
  }
  if (start) connection_->start_events_from(state_);  // posted before the flush: in order
  if (post) connection_->flush_from(state_);
}

void ExchangeImpl::start_body(HttpResponse head, std::optional<uint64_t> length) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->answered || state_->over) return;
    state_->answered = true;
    state_->body = true;
  }
  connection_->start_body_from(state_, std::move(head), length);
}

void ExchangeImpl::write_body(std::string_view bytes) {
  if (bytes.empty()) return;
  bool post = false;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->body || state_->ended || state_->over) return;
    state_->pending.append(bytes);
    post = !state_->flush_posted;
    state_->flush_posted = true;
  }
  if (post) connection_->flush_from(state_);
}

void ExchangeImpl::end_body(bool complete) {
  bool post = false;
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->body || state_->ended || state_->over) return;
    state_->ended = true;
    state_->cut = !complete;
    post = !state_->flush_posted;
    state_->flush_posted = true;
  }
  if (post) connection_->flush_from(state_);
}

bool ExchangeImpl::wait_writable(size_t max_unsent) {
  std::unique_lock lock(state_->mutex);
  while (true) {
    if (state_->over) return !state_->closed.load();
    if (state_->pending.size() + state_->in_flight <= max_unsent) return true;
    // Woken by every completed write; the timeout only re-checks a server
    // that stopped (its queued work is dropped, so no write completes).
    state_->changed.wait_for(lock, std::chrono::seconds(1));
    lock.unlock();
    bool stopped = connection_->server_stopped();
    lock.lock();
    if (stopped) return false;
  }
}

Result<size_t> ExchangeImpl::read_body(char* buf, size_t cap) {
  if (!request_.body_streamed) return 0;  // no body (or one already read: request().body)
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->piece_error.empty()) return fail(ErrorKind::kUnavailable, state_->piece_error);
    if (state_->body_end) return 0;
    if (state_->over) return fail(ErrorKind::kUnavailable, "the client closed the connection");
    state_->piece_ready = false;
  }
  connection_->read_body_from(state_, std::max<size_t>(1, std::min(cap, kFileChunk)));
  std::unique_lock lock(state_->mutex);
  while (!state_->piece_ready && !state_->over) {
    state_->changed.wait_for(lock, std::chrono::seconds(1));
    lock.unlock();
    bool stopped = connection_->server_stopped();
    lock.lock();
    if (stopped) break;
  }
  if (!state_->piece_ready) return fail(ErrorKind::kUnavailable, "the client closed the connection");
  if (!state_->piece_error.empty()) return fail(ErrorKind::kUnavailable, state_->piece_error);
  size_t n = std::min(cap, state_->piece.size());
  std::memcpy(buf, state_->piece.data(), n);
  state_->piece.clear();
  return n;
}

void ExchangeImpl::on_close(std::function<void()> callback) {
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->over) {
      state_->callbacks.push_back(std::move(callback));
      return;
    }
  }
  callback();
}

// -------------------------------------------------------------- Connection

Connection::Connection(std::shared_ptr<HttpServer::Core> core, tcp::socket socket)
    : core_(std::move(core)),
      strand_(socket.get_executor()),
      socket_(std::move(socket)),
      timer_(strand_),
      keepalive_timer_(strand_) {
  // Waiting from the accept on, not from start(): start() runs later on any
  // I/O thread, and an accepted connection that has not started yet must be
  // as evictable, and as old, as its accept order says.
  start_waiting();
}

Connection::~Connection() {
  std::lock_guard lock(core_->mutex);
  core_->connections.erase(this);
  if (waiting_since.load() == kEvicted) --core_->evicting;
}

void Connection::start_waiting() {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  int64_t since = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  int64_t was = waiting_since.load();
  while (was != kEvicted && !waiting_since.compare_exchange_weak(was, since)) {
  }
}

bool Connection::stop_waiting() {
  int64_t was = waiting_since.load();
  while (was != kEvicted && !waiting_since.compare_exchange_weak(was, 0)) {
  }
  return was != kEvicted;
}

void Connection::respond_from(std::shared_ptr<ExchangeState> state, HttpResponse response,
                              std::string error) {
  core_->post(strand_, [self = shared_from_this(), state = std::move(state),
                        response = std::move(response), error = std::move(error)]() mutable {
    if (state != self->current_ || self->phase_ != Phase::kHandling) return;
    if (!error.empty() && self->info_.error.empty()) self->info_.error = error;
    // A streamed request body not read to its end: its rest is read and dropped, then close.
    bool unread = self->body_streaming_;
    self->send(std::move(response), !self->info_.keep_alive || unread, unread);
  });
}

void Connection::start_events_from(std::shared_ptr<ExchangeState> state) {
  core_->post(strand_, [self = shared_from_this(), state = std::move(state)] {
    if (state != self->current_ || self->phase_ != Phase::kHandling) return;
    self->start_events();
  });
}

void Connection::flush_from(std::shared_ptr<ExchangeState> state) {
  core_->post(strand_, [self = shared_from_this(), state = std::move(state)] {
    if (state != self->current_) return;
    if (self->phase_ == Phase::kEvents) self->pump_events();
    if (self->phase_ == Phase::kStreaming) self->pump_body();
  });
}

void Connection::start_body_from(std::shared_ptr<ExchangeState> state, HttpResponse head,
                                 std::optional<uint64_t> length) {
  core_->post(strand_, [self = shared_from_this(), state = std::move(state), head = std::move(head), length]() mutable {
    if (state != self->current_ || self->phase_ != Phase::kHandling) return;
    self->start_body(std::move(head), length);
  });
}

void Connection::read_body_from(std::shared_ptr<ExchangeState> state, size_t cap) {
  bool posted = core_->post(strand_, [self = shared_from_this(), state, cap] {
    self->read_body_piece(state, cap);
  });
  if (!posted) state->deliver("", false, "the server is stopping");
}

bool Connection::server_stopped() const {
  std::lock_guard lock(core_->mutex);
  return core_->stopped;
}

void Connection::close_from(const char* reason) {
  core_->post(strand_, [self = shared_from_this(), reason] { self->close(reason); });
}

void Connection::start() {
  if (phase_ == Phase::kClosed) return;  // the server stopped first
  remote_ = endpoint_text(socket_);
  beast::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  // The first request's header must arrive within header_timeout of the connect.
  phase_ = Phase::kIdle;  // waiting since the accept (the constructor)
  arm(core_->options.header_timeout_ms);
  rearm_on_first_byte_ = false;
  read_some();
}

void Connection::arm(int ms) {
  if (phase_ == Phase::kClosed) return;
  uint64_t gen = ++deadline_gen_;
  timer_.expires_after(std::chrono::milliseconds(ms));
  timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
    if (ec || gen != self->deadline_gen_ || self->phase_ == Phase::kClosed) return;
    if (self->phase_ == Phase::kLinger) {
      self->close("linger over");
      return;
    }
    const char* reason = "timed out";
    switch (self->phase_) {
      case Phase::kIdle: reason = self->info_.started ? "idle timeout" : "header timeout"; break;
      case Phase::kHeader: reason = "header timeout"; break;
      case Phase::kBody: reason = "body timeout"; break;
      default: reason = "write timeout (the client does not read)"; break;
    }
    if (self->phase_ == Phase::kHandling && self->body_streaming_) reason = "body timeout";
    self->close(reason);
  });
}

void Connection::disarm() {
  ++deadline_gen_;
  timer_.cancel();
}

bool Connection::write_completed(beast::error_code ec, size_t bytes, const char* reason) {
  writing_ = false;
  info_.bytes_out += bytes;
  if (phase_ == Phase::kClosed) return false;
  if (ec) {
    close(reason);
    return false;
  }
  return true;
}

void Connection::close(const char* reason) {
  if (phase_ == Phase::kClosed) return;
  Phase was = phase_;
  phase_ = Phase::kClosed;
  disarm();
  ++keepalive_gen_;
  keepalive_timer_.cancel();
  beast::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  file_.reset();
  bool mid_request = was == Phase::kHeader || was == Phase::kBody || was == Phase::kHandling ||
                     was == Phase::kResponding || was == Phase::kEvents || was == Phase::kStreaming;
  if (mid_request && (info_.started || was == Phase::kHeader) && info_.error.empty()) {
    info_.error = reason;
  }
  if (mid_request && (info_.started || buffer_.size() > 0)) log_request();
  if (!spool_done_) spool_.reset();  // a partial body: remove it now
  finish_request(true);
}

// The exchange (if any) is over; the spool file goes when the handler lets go too.
void Connection::finish_request(bool connection_closed) {
  spool_.reset();
  spool_done_ = false;
  if (auto state = std::move(current_)) state->finish(connection_closed);
}

void Connection::log_request() {
  if (!core_->options.access_log) return;
  nlohmann::json line = {
      {"msg", "http request"},
      {"remote", remote_},
      {"method", loggable(info_.method, 16)},
      {"path", info_.path},
      {"status", info_.status},
      {"bytes_in", info_.bytes_in},
      {"bytes_out", info_.bytes_out},
  };
  if (info_.started) {
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                        info_.start);
    line["duration_ms"] = std::round(ms.count() * 1000) / 1000;
  }
  if (!info_.error.empty()) line["error"] = loggable(info_.error);
  core_->log(line);
}

// ------------------------------------------------------------------ reading

void Connection::next_request() {
  phase_ = Phase::kIdle;
  start_waiting();
  info_ = Info{};
  request_ = HttpRequest{};
  header_parser_.reset();
  string_parser_.reset();
  file_parser_.reset();
  body_parser_.reset();
  body_streaming_ = false;
  if (buffer_.size() > 0) {  // a pipelined request is already here
    arm(core_->options.header_timeout_ms);
    rearm_on_first_byte_ = false;
    if (reading_) {
      socket_.cancel();  // the watch read ends; on_read_some goes on with the header
      return;
    }
    read_header();
    return;
  }
  arm(core_->options.idle_timeout_ms);
  rearm_on_first_byte_ = true;
  if (!reading_) read_some();
}

void Connection::read_some() {
  reading_ = true;
  socket_.async_read_some(buffer_.prepare(kReadChunk),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->on_read_some(ec, n);
                          });
}

void Connection::on_read_some(beast::error_code ec, size_t n) {
  reading_ = false;
  if (phase_ == Phase::kClosed) return;
  buffer_.commit(n);
  if (phase_ == Phase::kLinger) {
    lingered_bytes_ += buffer_.size();
    buffer_.clear();
    if (ec || lingered_bytes_ > kLingerBytes) {
      close("linger over");
    } else {
      read_some();
    }
    return;
  }
  if (phase_ == Phase::kIdle) {
    if (ec && !(ec == net::error::operation_aborted && buffer_.size() > 0)) {
      close(info_.started ? "client closed" : "client closed before a request");
      return;
    }
    if (rearm_on_first_byte_) arm(core_->options.header_timeout_ms);
    read_header();
    return;
  }
  if (phase_ != Phase::kHandling && phase_ != Phase::kResponding && phase_ != Phase::kEvents &&
      phase_ != Phase::kStreaming) {
    return;  // not a watch read (cannot happen; keeps a second read from starting)
  }
  if (ec) {  // a handler is working or a response is going out
    close("client closed the connection");
    return;
  }
  if (buffer_.size() < max_buffered(core_->options)) read_some();
}

void Connection::read_header() {
  phase_ = Phase::kHeader;
  header_parser_.emplace();
  uint64_t limit = std::min<uint64_t>(core_->options.max_header_bytes, UINT32_MAX);
  header_parser_->header_limit(static_cast<uint32_t>(limit));
  // The route's limit applies once it is known. (Not boost::none: Beast 1.74
  // compares the Content-Length with an empty optional and refuses every body.)
  header_parser_->body_limit(std::numeric_limits<uint64_t>::max());
  reading_ = true;
  http::async_read_header(socket_, buffer_, *header_parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            self->reading_ = false;
                            self->on_header(ec);
                          });
}

void Connection::on_header(beast::error_code ec) {
  if (phase_ == Phase::kClosed) return;
  if (!stop_waiting()) {  // the server is full and chose this connection to make room
    close("evicted while waiting for a request header");
    return;
  }
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    reply_error(431, "header_too_large", "request header larger than " +
                                             std::to_string(core_->options.max_header_bytes) +
                                             " bytes", true);
    return;
  }
  if (ec) {
    if (client_gone(ec) || ec.category() != http::make_error_code(http::error::bad_target).category()) {
      close("client closed during the header");
    } else {
      reply_error(400, "bad_request", "malformed HTTP request: " + ec.message(), true);
    }
    return;
  }
  auto& req = header_parser_->get();
  info_.started = true;
  info_.start = std::chrono::steady_clock::now();
  info_.method = std::string(req.method_string());
  info_.version = req.version() == 10 ? 10 : 11;
  info_.keep_alive = req.keep_alive();
  std::string_view target(req.target().data(), req.target().size());
  info_.path = loggable(target.substr(0, target.find('?')));

  bool has_body = header_parser_->chunked() || header_parser_->content_length().value_or(0) > 0;
  auto parsed = parse_target(target);
  // Refused before the body: the connection survives only if there is no body to skip.
  bool keep = !has_body && info_.keep_alive;
  if (!parsed) {
    reply_error(400, "bad_request", parsed.error().what, has_body, keep);
    return;
  }
  request_.method = info_.method;
  request_.target = std::string(target);
  request_.path = std::move(parsed->path);
  request_.query = std::move(parsed->query);
  request_.remote = remote_;
  for (const auto& field : req) {
    std::string name = lower(std::string_view(field.name_string().data(), field.name_string().size()));
    std::string value(field.value().data(), field.value().size());
    auto [it, inserted] = request_.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
  if (core_->options.gate) {
    std::optional<HttpResponse> refused;
    try {
      refused = core_->options.gate(request_);
    } catch (const std::exception& e) {
      info_.error = std::string("gate threw: ") + e.what();
      refused = HttpResponse::error(500, "internal", "internal error");
    }
    if (refused) {
      request_ = HttpRequest{};
      send(std::move(*refused), !keep, has_body);
      return;
    }
  }
  RouteTable::Lookup found = core_->table.find(info_.method, parsed->segments);
  if (found.outcome == RouteTable::Outcome::kNotFound) {
    reply_error(404, "not_found", "no such endpoint: " + info_.path, has_body, keep);
    return;
  }
  if (found.outcome == RouteTable::Outcome::kMethodNotAllowed) {
    HttpResponse r = HttpResponse::error(
        405, "method_not_allowed", info_.method + " is not allowed here; allowed: " + found.allow);
    r.headers.emplace_back("Allow", found.allow);
    send(std::move(r), !keep, has_body);
    return;
  }
  route_ = found.index;
  const RouteOptions& options = core_->routes[route_].options;
  if (header_parser_->content_length().value_or(0) > options.max_body_bytes) {
    reply_error(413, "body_too_large",
                "request body larger than " + std::to_string(options.max_body_bytes) + " bytes",
                true);
    return;
  }

  request_.params = std::move(found.params);

  if (!has_body) {
    dispatch();
    return;
  }
  if (options.before_body) {
    std::optional<HttpResponse> refused;
    try {
      refused = options.before_body(request_);
    } catch (const std::exception& e) {
      info_.error = std::string("before_body threw: ") + e.what();
      refused = HttpResponse::error(500, "internal", "internal error");
    }
    if (refused) {
      request_ = HttpRequest{};
      send(std::move(*refused), true, true);  // the body stays unread: linger, then close
      return;
    }
  }
  phase_ = Phase::kBody;
  arm(core_->options.body_timeout_ms);
  if (lower(std::string_view(req[http::field::expect].data(), req[http::field::expect].size())) ==
      "100-continue") {
    static const std::string k100 = "HTTP/1.1 100 Continue\r\n\r\n";
    writing_ = true;
    net::async_write(socket_, net::buffer(k100),
                     [self = shared_from_this()](beast::error_code wec, size_t) {
                       self->writing_ = false;
                       if (self->phase_ == Phase::kClosed) return;
                       if (wec) {
                         self->close("client closed before sending the body");
                         return;
                       }
                       self->read_body();
                     });
    return;
  }
  read_body();
}

void Connection::read_body() {
  const RouteOptions& options = core_->routes[route_].options;
  auto done = [self = shared_from_this()](beast::error_code ec, size_t) {
    self->reading_ = false;
    self->on_body(ec);
  };
  if (options.stream_body) {  // the handler reads it (read_body), under the body timeout armed above
    body_parser_.emplace(std::move(*header_parser_));
    header_parser_.reset();
    body_parser_->body_limit(options.max_body_bytes);
    request_.body_streamed = true;
    request_.body_bytes = body_parser_->content_length().value_or(0);
    body_streaming_ = !body_parser_->is_done();
    dispatch();
    return;
  }
  reading_ = true;
  if (options.spool_body) {
    file_parser_.emplace(std::move(*header_parser_));
    header_parser_.reset();
    file_parser_->body_limit(options.max_body_bytes);
    auto spool = std::make_shared<SpoolFile>();
    std::string path = core_->options.spool_dir + "/body-" + random_hex(24);
    beast::error_code ec;
    file_parser_->get().body().open(path.c_str(), beast::file_mode::write_new, ec);
    if (ec) {
      reading_ = false;
      info_.error = "cannot create the spool file " + path + ": " + ec.message();
      auto why = spool_refusal(ec);
      reply_error(why.status, why.code, why.message, true);
      return;
    }
    spool->path = std::move(path);
    spool_ = std::move(spool);
    http::async_read(socket_, buffer_, *file_parser_, std::move(done));
  } else {
    string_parser_.emplace(std::move(*header_parser_));
    header_parser_.reset();
    string_parser_->body_limit(options.max_body_bytes);
    http::async_read(socket_, buffer_, *string_parser_, std::move(done));
  }
}

void Connection::on_body(beast::error_code ec) {
  if (phase_ == Phase::kClosed) return;
  if (ec == http::error::body_limit) {
    reply_error(413, "body_too_large",
                "request body larger than " +
                    std::to_string(core_->routes[route_].options.max_body_bytes) + " bytes",
                true);
    return;
  }
  if (ec) {
    if (client_gone(ec)) {
      close("client closed during the body");
    } else if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      reply_error(400, "bad_request", "malformed request body: " + ec.message(), true);
    } else {  // writing the spool file failed (disk full, ...)
      info_.error = "spooling the body: " + ec.message();
      auto why = spool_refusal(ec);
      reply_error(why.status, why.code, why.message, true);
    }
    return;
  }
  if (file_parser_) {
    beast::error_code cec;
    file_parser_->get().body().file().close(cec);
    std::error_code fec;
    request_.body_file = spool_->path;
    request_.body_bytes = std::filesystem::file_size(spool_->path, fec);
    spool_done_ = true;
  } else {
    request_.body = std::move(string_parser_->get().body());
    request_.body_bytes = request_.body.size();
  }
  info_.bytes_in = request_.body_bytes;
  dispatch();
}

void Connection::dispatch() {
  phase_ = Phase::kHandling;
  if (!body_streaming_) disarm();  // a streamed body keeps its deadline until its end
  current_ = std::make_shared<ExchangeState>();
  auto exchange =
      std::make_shared<ExchangeImpl>(shared_from_this(), current_, spool_, std::move(request_));
  request_ = HttpRequest{};
  // Keep reading: a client that goes away is noticed while the handler works.
  // (Not while the handler reads a streamed body: its reads notice that.)
  if (!body_streaming_ && !reading_ && buffer_.size() < max_buffered(core_->options)) read_some();
  try {
    core_->routes[route_].handler(exchange);
  } catch (const std::exception& e) {
    info_.error = std::string("handler threw: ") + e.what();
    exchange->respond(HttpResponse::error(500, "internal", "internal error"));
  } catch (...) {
    info_.error = "handler threw a non-exception";
    exchange->respond(HttpResponse::error(500, "internal", "internal error"));
  }
}

// ------------------------------------------------------------------ writing

void Connection::reply_error(int status, const std::string& code, const std::string& message,
                             bool linger, bool keep_alive) {
  if (!info_.started) info_.start = std::chrono::steady_clock::now();
  info_.started = true;
  send(HttpResponse::error(status, code, message), !keep_alive, linger);
}

template <class Message>
void Connection::fill_headers(Message& message, const HttpResponse& response) {
  message.version(info_.version);
  // 1xx would leave the client waiting for the real answer; nonsense is a bug.
  int status = response.status >= 200 && response.status <= 599 ? response.status : 500;
  message.result(static_cast<unsigned>(status));
  info_.status = status;
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || !header_safe(name) || !header_safe(value)) continue;
    std::string n = lower(name);
    if (n == "content-length" || n == "transfer-encoding" || n == "connection") continue;
    message.insert(name, value);
  }
  message.keep_alive(!close_after_);
}

void Connection::send(HttpResponse response, bool close_after, bool linger) {
  phase_ = Phase::kResponding;
  close_after_ = close_after;
  linger_after_ = linger;
  if (!response.file.empty() || response.file_fd) {
    UniqueFd fd(response.file_fd ? ::fcntl(response.file_fd->get(), F_DUPFD_CLOEXEC, 0)
                                 : ::open(response.file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    response.file_fd.reset();
    struct stat st {};
    off_t start = fd ? ::lseek(fd.get(), 0, SEEK_CUR) : -1;
    if (fd && start >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= start) {
      file_ = std::move(fd);
      head_ = std::make_shared<http::response<http::empty_body>>();
      fill_headers(*head_, response);
      uint64_t size = static_cast<uint64_t>(st.st_size - start);
      head_->content_length(size);
      head_serializer_ = std::make_shared<http::response_serializer<http::empty_body>>(*head_);
      arm(core_->options.idle_timeout_ms);
      writing_ = true;
      http::async_write_header(socket_, *head_serializer_,
                               [self = shared_from_this(), size](beast::error_code ec, size_t n) {
                                 if (!self->write_completed(ec, n, "client closed during the response")) return;
                                 self->write_file_step(
                                     std::make_shared<std::vector<char>>(kFileChunk), size);
                               });
      return;
    }
    info_.error = "response file " + response.file + " cannot be read";
    response = HttpResponse::error(500, "internal", "the response cannot be read");
  }
  auto message = std::make_shared<http::response<http::string_body>>();
  fill_headers(*message, response);
  // 204 and 304 have no body (Beast's prepare_payload throws on one).
  if (info_.status != 204 && info_.status != 304) message->body() = std::move(response.body);
  message->prepare_payload();
  write_string(std::move(message));
}

void Connection::write_string(std::shared_ptr<http::response<http::string_body>> message) {
  write_serialized(message, std::make_shared<http::response_serializer<http::string_body>>(*message));
}

// One write_some at a time, each with its own deadline: a slow but moving
// client gets its whole response, one that stopped reading is cut.
void Connection::write_serialized(
    std::shared_ptr<http::response<http::string_body>> message,
    std::shared_ptr<http::response_serializer<http::string_body>> serializer) {
  arm(core_->options.idle_timeout_ms);
  writing_ = true;
  http::async_write_some(
      socket_, *serializer,
      [self = shared_from_this(), message, serializer](beast::error_code ec, size_t n) {
        if (!self->write_completed(ec, n, "client closed during the response")) return;
        if (!serializer->is_done()) {
          self->write_serialized(message, serializer);
          return;
        }
        self->on_response_written();
      });
}

void Connection::write_file_step(std::shared_ptr<std::vector<char>> chunk, uint64_t remaining) {
  if (remaining == 0) {
    on_response_written();
    return;
  }
  ssize_t got;
  do {
    got = ::read(file_.get(), chunk->data(), std::min<uint64_t>(chunk->size(), remaining));
  } while (got < 0 && errno == EINTR);
  if (got <= 0) {  // the Content-Length is out; the only honest end is a cut
    info_.error = "the response file shrank or failed while being sent";
    close("response file read failed");
    return;
  }
  arm(core_->options.idle_timeout_ms);
  writing_ = true;
  net::async_write(socket_, net::buffer(chunk->data(), static_cast<size_t>(got)),
                   [self = shared_from_this(), chunk, remaining, got](beast::error_code ec,
                                                                     size_t n) {
                     if (!self->write_completed(ec, n, "client closed during the response")) return;
                     self->write_file_step(chunk, remaining - static_cast<uint64_t>(got));
                   });
}

void Connection::on_response_written() {
  disarm();
  file_.reset();
  head_serializer_.reset();
  head_.reset();
  log_request();
  finish_request(false);
  phase_ = Phase::kIdle;
  info_ = Info{};
  if (!close_after_) {
    next_request();
  } else if (linger_after_) {
    linger();
  } else {
    close("connection: close");
  }
}

// After an error that leaves unread request bytes: send our FIN, then read
// and discard for a short while, so the client reads the error response
// instead of a reset caused by closing over unread data.
void Connection::linger() {
  phase_ = Phase::kLinger;
  lingered_bytes_ = 0;
  buffer_.clear();
  beast::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  arm(kLingerMs);
  if (!reading_) read_some();
}

void Connection::start_events() {
  phase_ = Phase::kEvents;
  close_after_ = !info_.keep_alive;
  linger_after_ = false;
  HttpResponse r;
  r.headers = {{"Content-Type", "text/event-stream"},
               {"Cache-Control", "no-cache"},
               {"X-Accel-Buffering", "no"}};
  head_ = std::make_shared<http::response<http::empty_body>>();
  fill_headers(*head_, r);
  head_->chunked(true);
  write_head_then("client closed the event stream", &Connection::pump_events);
}

void Connection::pump_events() {
  if (writing_ || phase_ != Phase::kEvents || !current_) return;
  std::string data;
  bool end;
  {
    std::lock_guard lock(current_->mutex);
    data.swap(current_->pending);
    current_->flush_posted = false;
    current_->in_flight = data.size();
    end = current_->ended;
  }
  auto done = [self = shared_from_this(), state = current_](beast::error_code ec, size_t n, bool last) {
    {
      std::lock_guard lock(state->mutex);
      state->in_flight = 0;
    }
    state->changed.notify_all();
    if (!self->write_completed(ec, n, "client closed the event stream")) return;
    self->disarm();
    if (last) {
      self->on_response_written();
    } else {
      self->pump_events();
    }
  };
  ++keepalive_gen_;  // any write, or the end, restarts the silence
  if (!data.empty()) {
    auto text = std::make_shared<std::string>(std::move(data));
    arm(core_->options.idle_timeout_ms);
    writing_ = true;
    net::async_write(socket_, http::make_chunk(net::buffer(*text)),
                     [done, text](beast::error_code ec, size_t n) { done(ec, n, false); });
  } else if (end) {
    arm(core_->options.idle_timeout_ms);
    writing_ = true;
    net::async_write(socket_, http::make_chunk_last(),
                     [done](beast::error_code ec, size_t n) { done(ec, n, true); });
  } else {
    arm_keepalive();
  }
}

// Nothing to send: after event_keepalive_ms of silence, queue the comment
// (clients skip lines that start with ':') and pump it like an event.
void Connection::arm_keepalive() {
  int ms = core_->options.event_keepalive_ms;
  if (ms <= 0) return;
  uint64_t gen = keepalive_gen_;
  keepalive_timer_.expires_after(std::chrono::milliseconds(ms));
  keepalive_timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
    if (ec || gen != self->keepalive_gen_ || self->phase_ != Phase::kEvents || !self->current_) return;
    {
      std::lock_guard lock(self->current_->mutex);
      if (self->current_->ended) return;
      self->current_->pending += ": keep-alive\n\n";
    }
    self->pump_events();
  });
}

}  // namespace airlock::api

namespace airlock::api {

// ------------------------------------------------- streamed response bodies

void Connection::start_body(HttpResponse head, std::optional<uint64_t> length) {
  bool unread = body_streaming_;  // the request body's rest is dropped after the answer
  phase_ = Phase::kStreaming;
  close_after_ = !info_.keep_alive || unread;
  linger_after_ = unread;
  head_ = std::make_shared<http::response<http::empty_body>>();
  fill_headers(*head_, head);
  if (info_.status == 204 || info_.status == 304) length = 0;  // no body, and no length header either
  else if (length) head_->content_length(*length);
  else head_->chunked(true);
  body_length_ = length;
  body_sent_ = 0;
  write_head_then("client closed during the response", &Connection::pump_body);
}

void Connection::write_head_then(const char* closed, void (Connection::*pump)()) {
  head_serializer_ = std::make_shared<http::response_serializer<http::empty_body>>(*head_);
  arm(core_->options.idle_timeout_ms);
  writing_ = true;
  http::async_write_header(socket_, *head_serializer_,
                           [self = shared_from_this(), closed, pump](beast::error_code ec, size_t n) {
                             if (!self->write_completed(ec, n, closed)) return;
                             self->disarm();
                             ((*self).*pump)();
                           });
}

// Writes what the handler queued, one write at a time, each under the idle
// deadline (a client that stops reading is cut); then the end, or the cut.
void Connection::pump_body() {
  if (writing_ || phase_ != Phase::kStreaming || !current_) return;
  std::string data;
  bool end, cut;
  {
    std::lock_guard lock(current_->mutex);
    data.swap(current_->pending);
    current_->flush_posted = false;
    current_->in_flight = data.size();
    end = current_->ended;
    cut = current_->cut;
  }
  if (body_length_ && data.size() > *body_length_ - body_sent_) {
    data.resize(*body_length_ - body_sent_);  // more than the declared length is dropped
    if (info_.error.empty()) info_.error = "the streamed body was longer than its length";
  }
  if (!data.empty()) {
    auto text = std::make_shared<std::string>(std::move(data));
    body_sent_ += text->size();
    auto done = [self = shared_from_this(), state = current_, text](beast::error_code ec, size_t n) {
      {
        std::lock_guard lock(state->mutex);
        state->in_flight = 0;
      }
      state->changed.notify_all();
      if (!self->write_completed(ec, n, "client closed during the response")) return;
      self->disarm();
      self->pump_body();
    };
    arm(core_->options.idle_timeout_ms);
    writing_ = true;
    if (body_length_) {
      net::async_write(socket_, net::buffer(*text), std::move(done));
    } else {
      net::async_write(socket_, http::make_chunk(net::buffer(*text)), std::move(done));
    }
    return;
  }
  current_->changed.notify_all();
  if (!end) return;
  if (cut || (body_length_ && body_sent_ < *body_length_)) {
    // The Content-Length (or the chunking) promised more: the only honest end is a cut.
    if (info_.error.empty()) info_.error = "the streamed body ended early";
    close("the streamed body ended early");
    return;
  }
  if (body_length_) {
    on_response_written();
    return;
  }
  arm(core_->options.idle_timeout_ms);
  writing_ = true;
  net::async_write(socket_, http::make_chunk_last(), [self = shared_from_this()](beast::error_code ec, size_t n) {
    if (!self->write_completed(ec, n, "client closed during the response")) return;
    self->on_response_written();
  });
}

// ---------------------------------------------------- streamed request bodies

void Connection::read_body_piece(std::shared_ptr<ExchangeState> state, size_t cap) {
  if (phase_ == Phase::kClosed) return state->deliver("", false, "the client closed the connection");
  if (state != current_ || !body_parser_) return state->deliver("", false, "the exchange is over");
  if (body_parser_->is_done()) return state->deliver("", true, "");
  if (reading_ || !body_streaming_) return state->deliver("", false, "the request body is not being read");
  body_piece_.resize(cap);
  body_parser_->get().body().data = body_piece_.data();
  body_parser_->get().body().size = body_piece_.size();
  body_parser_->get().body().more = true;
  reading_ = true;
  http::async_read_some(socket_, buffer_, *body_parser_,
                        [self = shared_from_this(), state = std::move(state)](beast::error_code ec, size_t) {
                          self->on_body_piece(state, ec);
                        });
}

void Connection::on_body_piece(std::shared_ptr<ExchangeState> state, beast::error_code ec) {
  reading_ = false;
  size_t got = body_piece_.size() - body_parser_->get().body().size;
  if (phase_ == Phase::kClosed) return state->deliver("", false, "the client closed the connection");
  if (phase_ == Phase::kLinger) {  // answered already: the rest is dropped
    state->deliver("", false, "the exchange is over");
    lingered_bytes_ += got + buffer_.size();
    buffer_.clear();
    if (ec || lingered_bytes_ > kLingerBytes) {
      close("linger over");
    } else {
      read_some();
    }
    return;
  }
  if (ec == http::error::need_buffer) ec = {};
  info_.bytes_in += got;
  if (ec == http::error::body_limit) {
    state->deliver("", false, "the request body is larger than the route allows");
    if (phase_ != Phase::kHandling) return close("request body too large");
    body_streaming_ = false;
    {
      std::lock_guard lock(state->mutex);
      state->answered = true;
    }
    reply_error(413, "body_too_large",
                "request body larger than " + std::to_string(core_->routes[route_].options.max_body_bytes) + " bytes",
                true);
    return;
  }
  if (ec) {
    state->deliver("", false, client_gone(ec) ? "the client closed during the body" : "malformed request body");
    if (client_gone(ec) || phase_ != Phase::kHandling) return close("client closed during the body");
    body_streaming_ = false;
    {
      std::lock_guard lock(state->mutex);
      state->answered = true;
    }
    reply_error(400, "bad_request", "malformed request body: " + ec.message(), true);
    return;
  }
  bool end = body_parser_->is_done();
  if (got == 0 && !end) return read_body_piece(std::move(state), body_piece_.size());  // only framing came
  if (end && body_streaming_) {
    body_streaming_ = false;
    if (phase_ == Phase::kHandling) {
      disarm();  // the body is in: the handler decides how long it takes now
      if (buffer_.size() < max_buffered(core_->options)) read_some();  // notice a client that leaves
    }
  }
  state->deliver(std::string(body_piece_.data(), got), end, "");
}

}  // namespace airlock::api
