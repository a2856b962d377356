#include "http/client.h"

// GCC 12 reports a false -Warray-bounds inside Asio's service registry.
#pragma GCC diagnostic ignored "-Warray-bounds"

#include <array>
#include <chrono>
#include <limits>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace airlock::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

// Runs one asynchronous operation to completion or until timeout_ms, then
// cancels it (and waits for the cancellation). Synchronous calls with a bound.
template <class Start>
beast::error_code run_op(net::io_context& ioc, tcp::socket& socket, int timeout_ms,
                         Start&& start) {
  std::optional<beast::error_code> result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run_for(std::chrono::milliseconds(std::max(timeout_ms, 0)));
  if (!result) {
    beast::error_code ignored;
    socket.cancel(ignored);
    ioc.restart();
    ioc.run();
    return net::error::timed_out;
  }
  return *result;
}

beast::error_code connect(net::io_context& ioc, tcp::socket& socket, const std::string& host,
                          uint16_t port, int timeout_ms) {
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) return ec;
  tcp::endpoint endpoint(address, port);
  return run_op(ioc, socket, timeout_ms,
                [&](auto handler) { socket.async_connect(endpoint, std::move(handler)); });
}

template <class Fields>
std::map<std::string, std::string> header_map(const Fields& fields) {
  std::map<std::string, std::string> out;
  for (const auto& f : fields) {
    std::string name(f.name_string().data(), f.name_string().size());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value(f.value().data(), f.value().size());
    auto [it, inserted] = out.emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
  return out;
}

// Method, target, Host and `headers` (as given); true if they frame the body
// (Content-Length or Transfer-Encoding).
template <class Body>
bool fill_request(http::request<Body>& req, const std::string& host, const std::string& method,
                  const std::string& target, const std::map<std::string, std::string>& headers) {
  req.version(11);
  http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    req.method_string(method);
  } else {
    req.method(verb);
  }
  req.target(target);
  req.set(http::field::host, host.find(':') == std::string::npos ? host : "[" + host + "]");
  bool framed = false;
  for (const auto& [name, value] : headers) {
    req.insert(name, value);
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "content-length" || lower == "transfer-encoding") framed = true;
  }
  return framed;
}

http::request<http::string_body> make_request(const std::string& host, const std::string& method,
                                              const std::string& target, const std::string& body,
                                              const std::map<std::string, std::string>& headers) {
  http::request<http::string_body> req;
  bool framed = fill_request(req, host, method, target, headers);
  req.body() = body;
  if (!framed && (!body.empty() || method == "POST" || method == "PUT")) {
    req.content_length(body.size());
  }
  return req;
}

}  // namespace

nlohmann::json Response::json() const { return nlohmann::json::parse(body); }

// ---------------------------------------------------------------- events

struct EventStream::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  std::array<char, 16 << 10> chunk{};
  SseParser events;
  bool ended = false;
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string error;
  std::chrono::steady_clock::time_point last_bytes = std::chrono::steady_clock::now();
};

EventStream::EventStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventStream::EventStream(EventStream&&) noexcept = default;
EventStream& EventStream::operator=(EventStream&&) noexcept = default;
EventStream::~EventStream() { close(); }

int EventStream::status() const { return impl_ ? impl_->status : 0; }

const std::map<std::string, std::string>& EventStream::headers() const {
  static const std::map<std::string, std::string> kNone;
  return impl_ ? impl_->headers : kNone;
}

const std::string& EventStream::error() const {
  static const std::string kNone;
  return impl_ ? impl_->error : kNone;
}

bool EventStream::ended() const { return !impl_ || impl_->ended; }

std::chrono::steady_clock::time_point EventStream::last_bytes_at() const {
  return impl_ ? impl_->last_bytes : std::chrono::steady_clock::now();
}

std::optional<Event> EventStream::next(int timeout_ms) {
  if (!impl_) return std::nullopt;
  Impl& s = *impl_;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    if (auto ev = s.events.next()) return ev;
    if (s.ended) return std::nullopt;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    s.parser.get().body().data = s.chunk.data();
    s.parser.get().body().size = s.chunk.size();
    beast::error_code ec = run_op(s.ioc, s.socket, static_cast<int>(left.count()), [&](auto h) {
      http::async_read_some(s.socket, s.buffer, s.parser, std::move(h));
    });
    size_t got = s.chunk.size() - s.parser.get().body().size;
    s.events.feed(std::string_view(s.chunk.data(), got));
    if (got > 0) s.last_bytes = std::chrono::steady_clock::now();
    if (ec == http::error::need_buffer) ec = {};
    if (ec == net::error::timed_out) continue;  // the deadline check ends the loop
    if (ec || s.parser.is_done()) s.ended = true;
  }
}

std::string EventStream::read_rest(int timeout_ms, size_t max_bytes) {
  std::string out;
  if (!impl_) return out;
  Impl& s = *impl_;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!s.ended && out.size() < max_bytes) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    s.parser.get().body().data = s.chunk.data();
    s.parser.get().body().size = s.chunk.size();
    beast::error_code ec = run_op(s.ioc, s.socket, static_cast<int>(left.count()), [&](auto h) {
      http::async_read_some(s.socket, s.buffer, s.parser, std::move(h));
    });
    size_t got = s.chunk.size() - s.parser.get().body().size;
    out.append(s.chunk.data(), std::min(got, max_bytes - out.size()));
    if (ec == http::error::need_buffer) ec = {};
    if (ec == net::error::timed_out) break;
    if (ec || s.parser.is_done()) s.ended = true;
  }
  return out;
}

void EventStream::close() {
  if (!impl_) return;
  beast::error_code ec;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
  impl_->socket.close(ec);
  impl_->ended = true;
}

// ------------------------------------------------------- streamed answers

struct ResponseReader::Impl {
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string error;
  bool timed_out = false;
  bool source_failed = false;
  bool done = false;
  bool broken = false;  // a read failed: nothing more can be read
};

ResponseReader::ResponseReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResponseReader::ResponseReader(ResponseReader&&) noexcept = default;
ResponseReader& ResponseReader::operator=(ResponseReader&&) noexcept = default;
ResponseReader::~ResponseReader() { close(); }

int ResponseReader::status() const { return impl_ ? impl_->status : 0; }

const std::map<std::string, std::string>& ResponseReader::headers() const {
  static const std::map<std::string, std::string> kNone;
  return impl_ ? impl_->headers : kNone;
}

const std::string& ResponseReader::error() const {
  static const std::string kNone;
  return impl_ ? impl_->error : kNone;
}

bool ResponseReader::timed_out() const { return impl_ && impl_->timed_out; }
bool ResponseReader::body_source_failed() const { return impl_ && impl_->source_failed; }
bool ResponseReader::done() const { return !impl_ || impl_->done; }

std::optional<uint64_t> ResponseReader::content_length() const {
  if (!impl_ || impl_->status == 0) return std::nullopt;
  auto n = impl_->parser.content_length();
  return n ? std::optional<uint64_t>(*n) : std::nullopt;
}

Result<size_t> ResponseReader::read_some(char* buf, size_t cap, int timeout_ms) {
  if (!impl_ || impl_->status == 0) return fail(ErrorKind::kUnavailable, "no response");
  Impl& s = *impl_;
  if (s.done) return 0;
  if (s.broken) return fail(ErrorKind::kUnavailable, s.error);
  if (cap == 0) return fail(ErrorKind::kInvalid, "read_some: no room");
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    s.parser.get().body().data = buf;
    s.parser.get().body().size = cap;
    beast::error_code ec = run_op(s.ioc, s.socket, std::max<int>(0, static_cast<int>(left.count())), [&](auto h) {
      http::async_read_some(s.socket, s.buffer, s.parser, std::move(h));
    });
    size_t got = cap - s.parser.get().body().size;
    if (ec == http::error::need_buffer) ec = {};
    if (!ec && s.parser.is_done()) s.done = true;
    s.timed_out = ec == net::error::timed_out;
    if (ec) s.error = "read: " + ec.message();
    // A timeout cancelled the read before anything was parsed: the caller may
    // read on. Any other error ends the stream.
    if (ec && !s.timed_out) s.broken = true;
    if (got > 0) return got;  // an error is reported by the next call
    if (s.done) return 0;
    if (ec) return fail(s.timed_out ? ErrorKind::kUnavailable : ErrorKind::kInternal, s.error);
    // Only framing (a chunk header) came: read on.
  }
}

void ResponseReader::close() {
  if (!impl_) return;
  beast::error_code ec;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
  impl_->socket.close(ec);
}

// ---------------------------------------------------------------- client

struct HttpClient::Impl {
  std::string host;
  uint16_t port;
  int timeout_ms;
  net::io_context ioc;
  tcp::socket socket{ioc};
  beast::flat_buffer buffer;
  bool open = false;

  void disconnect() {
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    buffer.clear();
    open = false;
  }
};

HttpClient::HttpClient(std::string host, uint16_t port, int timeout_ms) : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout_ms = timeout_ms;
}

HttpClient::HttpClient(uint16_t port, int timeout_ms) : HttpClient("127.0.0.1", port, timeout_ms) {}

void HttpClient::set_timeout(int timeout_ms) { impl_->timeout_ms = timeout_ms; }

HttpClient::~HttpClient() { impl_->disconnect(); }

bool HttpClient::connected() const { return impl_->open; }

uint16_t HttpClient::local_port() const {
  if (!impl_->open) return 0;
  beast::error_code ec;
  auto ep = impl_->socket.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

Response HttpClient::request(const std::string& method, const std::string& target,
                             const std::string& body,
                             const std::map<std::string, std::string>& headers) {
  Impl& c = *impl_;
  auto req = make_request(c.host, method, target, body, headers);
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = c.open;
    if (!c.open) {
      if (auto ec = connect(c.ioc, c.socket, c.host, c.port, c.timeout_ms)) {
        c.disconnect();
        return Response{.error = "connect: " + ec.message()};
      }
      c.open = true;
    }
    beast::error_code write_ec = run_op(c.ioc, c.socket, c.timeout_ms, [&](auto h) {
      http::async_write(c.socket, req, std::move(h));
    });
    if (write_ec && reused) {  // the server had closed the idle connection
      c.disconnect();
      continue;
    }
    // Even after a failed write the server may have answered (413 mid-body).
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none (Beast 1.74)
    parser.header_limit(1 << 20);
    beast::error_code ec = run_op(c.ioc, c.socket, c.timeout_ms, [&](auto h) {
      http::async_read(c.socket, c.buffer, parser, std::move(h));
    });
    if (ec) {
      bool nothing = ec == http::error::end_of_stream || ec == net::error::connection_reset;
      c.disconnect();
      if (reused && nothing && !write_ec) continue;
      std::string what = write_ec ? "write: " + write_ec.message() + "; read: " : "read: ";
      return Response{.error = what + ec.message()};
    }
    auto res = parser.release();
    Response out;
    out.status = static_cast<int>(res.result_int());
    out.headers = header_map(res);
    out.body = std::move(res.body());
    if (!res.keep_alive() || write_ec) c.disconnect();
    return out;
  }
  return Response{.error = "the server closed the connection twice"};
}

EventStream HttpClient::open_events(const std::string& target,
                                    const std::map<std::string, std::string>& headers) {
  auto s = std::make_unique<EventStream::Impl>();
  s->parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none (Beast 1.74)
  if (auto ec = connect(s->ioc, s->socket, impl_->host, impl_->port, impl_->timeout_ms)) {
    s->error = "connect: " + ec.message();
    s->ended = true;
    return EventStream(std::move(s));
  }
  auto extra = headers;
  extra.emplace("Accept", "text/event-stream");
  auto req = make_request(impl_->host, "GET", target, "", extra);
  beast::error_code ec = run_op(s->ioc, s->socket, impl_->timeout_ms, [&](auto h) {
    http::async_write(s->socket, req, std::move(h));
  });
  if (!ec) {
    ec = run_op(s->ioc, s->socket, impl_->timeout_ms, [&](auto h) {
      http::async_read_header(s->socket, s->buffer, s->parser, std::move(h));
    });
  }
  if (ec) {
    s->error = ec.message();
    s->ended = true;
    return EventStream(std::move(s));
  }
  s->status = static_cast<int>(s->parser.get().result_int());
  s->headers = header_map(s->parser.get());
  if (s->parser.is_done()) s->ended = true;
  return EventStream(std::move(s));
}

ResponseReader HttpClient::open(const std::string& method, const std::string& target,
                                const std::map<std::string, std::string>& headers, std::string_view body,
                                const BodySource& source) {
  auto s = std::make_unique<ResponseReader::Impl>();
  s->parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none (Beast 1.74)
  s->parser.header_limit(1 << 20);
  const int timeout_ms = impl_->timeout_ms;
  if (auto ec = connect(s->ioc, s->socket, impl_->host, impl_->port, timeout_ms)) {
    s->error = "connect: " + ec.message();  // not timed_out(): the server was not reached
    return ResponseReader(std::move(s));
  }
  http::request<http::empty_body> req;
  bool framed = fill_request(req, impl_->host, method, target, headers);
  bool chunked = false;
  if (!framed) {
    if (source) {
      req.chunked(true);
      chunked = true;
    } else if (!body.empty() || method == "POST" || method == "PUT") {
      req.content_length(body.size());
    }
  } else {
    chunked = req.chunked();
  }
  http::request_serializer<http::empty_body> serializer(req);
  auto write = [&](const auto& buffers) {
    return run_op(s->ioc, s->socket, timeout_ms,
                  [&](auto h) { net::async_write(s->socket, buffers, std::move(h)); });
  };
  beast::error_code write_ec = run_op(s->ioc, s->socket, timeout_ms, [&](auto h) {
    http::async_write_header(s->socket, serializer, std::move(h));
  });
  if (!write_ec && !body.empty())
    write_ec = chunked ? write(http::make_chunk(net::buffer(body.data(), body.size())))
                       : write(net::buffer(body.data(), body.size()));
  if (!write_ec && source) {
    std::vector<char> piece(64 << 10);
    while (!write_ec) {
      auto n = source(piece.data(), piece.size());
      if (!n) {
        s->error = "request body: " + n.error().message();
        s->source_failed = true;
        return ResponseReader(std::move(s));  // closed without an end: the server sees a cut body
      }
      if (*n == 0) break;
      write_ec = chunked ? write(http::make_chunk(net::buffer(piece.data(), *n))) : write(net::buffer(piece.data(), *n));
    }
  }
  if (!write_ec && chunked) write_ec = write(http::make_chunk_last());
  // Even after a failed write the server may have answered (413 mid-body).
  beast::error_code ec = run_op(s->ioc, s->socket, timeout_ms, [&](auto h) {
    http::async_read_header(s->socket, s->buffer, s->parser, std::move(h));
  });
  if (ec) {
    s->timed_out = ec == net::error::timed_out && !write_ec;
    s->error = (write_ec ? "write: " + write_ec.message() + "; read: " : "read: ") + ec.message();
    return ResponseReader(std::move(s));
  }
  s->status = static_cast<int>(s->parser.get().result_int());
  s->headers = header_map(s->parser.get());
  s->done = s->parser.is_done();
  return ResponseReader(std::move(s));
}

}  // namespace airlock::api
