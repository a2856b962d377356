#include "support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace airlock::testing {

using Clock = std::chrono::steady_clock;

std::optional<std::string> leaked_internal_text(const Response& r) {
  if (r.status < 400) return std::nullopt;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  std::string text = r.body;
  if (j.is_object() && j.contains("error") && j["error"].is_object()) text = j["error"].dump();
  // SQL and the stores' libraries (libpq, SQLite), then the service's own paths on the host.
  static const char* const kLeaks[] = {
      "sql: ",           "SQLSTATE",           "SELECT ",       "INSERT INTO",      "UPDATE jobs",
      "DELETE FROM",     "no connection to the server", "server closed the connection", "libpq",
      "sqlite3",         "database is locked", "/run/airlock/", "/var/lib/airlock", "/tmp/airlock-test-",
      "/proc/self/",     "cgroup.procs",       "/sys/fs/cgroup"};
  for (const char* leak : kLeaks)
    if (text.find(leak) != std::string::npos)
      return std::string("an error answer (") + std::to_string(r.status) + ") carries \"" + leak + "\": " + text;
  return std::nullopt;
}

Response HttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                             const std::map<std::string, std::string>& headers) {
  Response r = api::HttpClient::request(method, target, body, headers);
  if (auto why = leaked_internal_text(r)) ADD_FAILURE() << method << " " << target << ": " << *why;
  return r;
}

RawConnection::RawConnection(uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("connect to 127.0.0.1 failed");
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string RawConnection::read_until(std::string_view needle, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!peer_closed_ && (needle.empty() || pending_.find(needle) == std::string::npos)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      peer_closed_ = true;  // FIN or reset
      break;
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
  return pending_;
}

std::string RawConnection::read_until_close(int timeout_ms) { return read_until("", timeout_ms); }

bool RawConnection::closed_within(int timeout_ms) {
  read_until("", timeout_ms);
  return peer_closed_;
}

}  // namespace airlock::testing
