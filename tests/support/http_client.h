// A small synchronous HTTP/1.1 client for tests, on Boost.Beast: keep-alive
// requests, a Server-Sent Events reader, and a raw socket for requests no
// well-behaved client sends. Every call is bounded in time, so a server bug
// fails a test instead of hanging it. Loopback only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace airlock::testing {

struct Response {
  int status = 0;                              // 0: no response (see error)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;  // transport failure, when status is 0
  nlohmann::json json() const;  // body parsed; throws if it is not JSON
};

struct Event {
  std::string id, event, data;
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
  // The next event, or nullopt on timeout or when the stream ended.
  std::optional<Event> next(int timeout_ms = 5000);
  bool ended() const;  // the server ended the stream (or the connection)
  void close();        // disconnect

 private:
  std::unique_ptr<Impl> impl_;
};

class HttpClient {
 public:
  explicit HttpClient(uint16_t port, int timeout_ms = 30000);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Reuses one keep-alive connection (reconnecting once if the server had
  // closed it). A Content-Length or Transfer-Encoding in `headers` is sent
  // as given, otherwise Content-Length is the body's size.
  Response request(const std::string& method, const std::string& target,
                   const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {});
  EventStream open_events(const std::string& target,
                          const std::map<std::string, std::string>& headers = {});
  bool connected() const;  // the keep-alive connection is open (as far as the client knows)
  uint16_t local_port() const;  // of the current connection; 0 if none

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A plain TCP connection for malformed, slow or partial requests.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool send(std::string_view bytes);  // false if the connection is gone
  // Everything that arrives until the server closes, or until timeout_ms.
  std::string read_until_close(int timeout_ms);
  // Reads until `needle` has arrived (or close/timeout); returns all read so far.
  std::string read_until(std::string_view needle, int timeout_ms);
  // Whether the server closed the connection within timeout_ms (data is discarded).
  bool closed_within(int timeout_ms);

 private:
  int fd_ = -1;
  std::string pending_;
  bool peer_closed_ = false;
};

}  // namespace airlock::testing
