// A small synchronous HTTP/1.1 client on Boost.Beast, for the command-line
// client and the tests: keep-alive requests and a Server-Sent Events reader.
// Every call is bounded in time, so a server that stops answering fails the
// call instead of hanging it. Plain HTTP to an IP address literal.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

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
  bool connected() const;       // the keep-alive connection is open (as far as the client knows)
  uint16_t local_port() const;  // of the current connection; 0 if none

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace airlock::api
