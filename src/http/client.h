// A small synchronous HTTP/1.1 client on Boost.Beast, for the command-line
// client, the tests and forwarding between nodes: keep-alive requests, a
// Server-Sent Events reader, and a streamed exchange (a body sent piece by
// piece, an answer read piece by piece) that holds a fixed buffer whatever
// the size of either.
// Every call is bounded in time, so a server that stops answering fails the
// call instead of hanging it. Plain HTTP to an IP address literal.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "http/sse.h"

namespace airlock::api {

struct Response {
  int status = 0;                              // 0: no response (see error)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;  // transport failure, when status is 0
  nlohmann::json json() const;  // body parsed; throws if it is not JSON
};

class EventStream {
 public:
  struct Impl;
  explicit EventStream(std::unique_ptr<Impl> impl);
  EventStream(EventStream&&) noexcept;
  EventStream& operator=(EventStream&&) noexcept;
  ~EventStream();

  int status() const;  // of the response that opened the stream; 0 if none
  const std::map<std::string, std::string>& headers() const;
  const std::string& error() const;  // why the stream could not be opened, when status() is 0
  // The next event, or nullopt on timeout or when the stream ended.
  std::optional<Event> next(int timeout_ms = 5000);
  bool ended() const;  // the server ended the stream (or the connection)
  // The rest of the body as raw bytes, for a response that is not an event
  // stream (an error, a 204): until it ends, `timeout_ms` passes or `max_bytes`
  // arrived. Use instead of next(), not after it.
  std::string read_rest(int timeout_ms, size_t max_bytes);
  // When bytes of the stream last arrived (events and comments alike, so a
  // keep-alive comment counts): a stream silent for longer than the server's
  // keep-alive interval allows is dead even if the connection looks open.
  std::chrono::steady_clock::time_point last_bytes_at() const;
  void close();        // disconnect

 private:
  std::unique_ptr<Impl> impl_;
};

// The answer to HttpClient::open: its status and headers, then its body read
// piece by piece when the caller asks, so a sender faster than the caller
// waits (TCP's own flow control) instead of filling this process's memory.
class ResponseReader {
 public:
  struct Impl;
  explicit ResponseReader(std::unique_ptr<Impl> impl);
  ResponseReader(ResponseReader&&) noexcept;
  ResponseReader& operator=(ResponseReader&&) noexcept;
  ~ResponseReader();

  int status() const;  // 0: no response (see error())
  const std::map<std::string, std::string>& headers() const;  // lower-case names
  const std::string& error() const;
  bool timed_out() const;  // error() is a timeout once connected: no answer (or no byte) in time
  // Set when the request's BodySource failed (the request was abandoned).
  bool body_source_failed() const;
  std::optional<uint64_t> content_length() const;  // none: chunked, or until the close
  // The next bytes of the body, at most `cap`: a count above 0, 0 at its end
  // (done()), or an error: nothing came within `timeout_ms` (timed_out(); the
  // caller may read on), or the connection broke (the stream is over).
  Result<size_t> read_some(char* buf, size_t cap, int timeout_ms);
  bool done() const;  // the whole body was read
  void close();       // disconnect

 private:
  std::unique_ptr<Impl> impl_;
};

// A request body sent as it comes: fills `buf` with at most `cap` bytes and
// returns how many, 0 at its end, or an error (the request is abandoned).
using BodySource = std::function<Result<size_t>(char* buf, size_t cap)>;

class HttpClient {
 public:
  // `host` is an IP address literal.
  HttpClient(std::string host, uint16_t port, int timeout_ms = 30000);
  explicit HttpClient(uint16_t port, int timeout_ms = 30000);  // on 127.0.0.1
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void set_timeout(int timeout_ms);
  // Reuses one keep-alive connection (reconnecting once if the server had
  // closed it). A Content-Length or Transfer-Encoding in `headers` is sent
  // as given, otherwise Content-Length is the body's size.
  Response request(const std::string& method, const std::string& target, const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {});
  EventStream open_events(const std::string& target, const std::map<std::string, std::string>& headers = {});
  // A streamed exchange on a connection of its own: sends the header, then
  // `body`, then what `source` gives (if set) until it returns 0, each write
  // within the timeout; then reads the answer's header (within the timeout)
  // and leaves its body to ResponseReader::read_some. With a source and no
  // Content-Length in `headers` the body is chunked; else Content-Length is
  // given or the size of `body`. A server that answers before taking the
  // whole body (a 413) is still heard.
  ResponseReader open(const std::string& method, const std::string& target,
                      const std::map<std::string, std::string>& headers, std::string_view body = {},
                      const BodySource& source = {});
  bool connected() const;       // the keep-alive connection is open (as far as the client knows)
  uint16_t local_port() const;  // of the current connection; 0 if none

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace airlock::api
