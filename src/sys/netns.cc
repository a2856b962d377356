#include "sys/netns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <cerrno>

#include <thread>

namespace airlock::sys {

Result<UniqueFd> listen_in_netns(int pidfd, uint16_t port, int backlog) {
  Result<UniqueFd> out = fail("not run");
  std::thread([&] {
    if (::setns(pidfd, CLONE_NEWNET) < 0) {
      out = fail_errno("enter the job's network namespace");
      return;
    }
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
      out = fail_errno("create the gateway's socket");
      return;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
      out = fail_errno("bind the gateway to 127.0.0.1:" + std::to_string(port) + " in the job's network namespace");
      return;
    }
    if (::listen(fd.get(), backlog) < 0) {
      out = fail_errno("listen on the gateway's socket");
      return;
    }
    out = std::move(fd);
  }).join();  // the thread, and its hold on the namespace, ends here
  return out;
}

namespace {

// Non-blocking connect bounded by timeout_ms, then back to blocking.
Status connect_bounded(int fd, const sockaddr_in& addr, int timeout_ms, const std::string& what) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return {};
  if (errno != EINPROGRESS) return fail_errno("connect to " + what);
  pollfd p{fd, POLLOUT, 0};
  int n = ::poll(&p, 1, timeout_ms);
  if (n == 0) return fail(ErrorKind::kUnavailable, "connect to " + what + ": no answer in " + std::to_string(timeout_ms) + " ms");
  if (n < 0) return fail_errno("poll the connection to " + what);
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return fail_errno("getsockopt SO_ERROR");
  if (err != 0) return fail_with("connect to " + what, err);
  return {};
}

}  // namespace

Result<UniqueFd> connect_in_netns(int ns_fd, const std::string& address, uint16_t port, int timeout_ms) {
  std::string what = address + ":" + std::to_string(port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) return fail("'" + address + "' is not an IPv4 address");
  Result<UniqueFd> out = fail("not run");
  std::thread([&] {
    if (::setns(ns_fd, CLONE_NEWNET) < 0) {
      out = fail_errno("enter the network namespace to connect to " + what);
      return;
    }
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) {
      out = fail_errno("create a socket");
      return;
    }
    if (auto st = connect_bounded(fd.get(), addr, timeout_ms, what); !st) {
      out = std::unexpected(st.error());
      return;
    }
    int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) < 0) {
      out = fail_errno("make the socket blocking");
      return;
    }
    out = std::move(fd);
  }).join();
  return out;
}

}  // namespace airlock::sys
