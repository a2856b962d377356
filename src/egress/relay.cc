#include "egress/relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace airlock::egress {
namespace {

constexpr size_t kPipeSize = 1 << 20;

// One direction of the relay: from -> pipe -> to.
struct Direction {
  int from = -1, to = -1;
  UniqueFd pipe_r, pipe_w;
  size_t in_pipe = 0;
  bool eof = false;   // nothing more will be read from `from`
  bool done = false;  // eof and the pipe drained; `to` half-closed
  std::optional<uint64_t> left;  // bytes still allowed from `from`
  uint64_t moved = 0;
};

Status make_pipe(Direction& d) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) return fail_errno("create a relay pipe");
  d.pipe_r = UniqueFd(p[0]);
  d.pipe_w = UniqueFd(p[1]);
  (void)::fcntl(p[1], F_SETPIPE_SZ, static_cast<int>(kPipeSize));  // best effort
  return {};
}

// Moves what it can without blocking: reads until the pipe is full or the
// socket is empty, writes until the pipe is empty or the socket is full (so
// one poll() serves many splices). false when the relay must end (error).
bool pump(Direction& d, short from_events, short to_events, bool shutdown_on_done) {
  bool readable = !d.eof && (from_events & (POLLIN | POLLHUP | POLLERR));
  bool writable = to_events & (POLLOUT | POLLERR | POLLHUP);
  for (bool progress = true; progress;) {
    progress = false;
    if (readable && !d.eof) {
      size_t want = kPipeSize - d.in_pipe;
      if (d.left) want = std::min<uint64_t>(want, *d.left);
      if (want > 0) {
        ssize_t n = ::splice(d.from, nullptr, d.pipe_w.get(), nullptr, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
          d.in_pipe += static_cast<size_t>(n);
          if (d.left) *d.left -= static_cast<uint64_t>(n);
          progress = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          d.eof = true;
          if (n < 0 && errno != ECONNRESET) return false;
        } else {
          readable = false;  // drained for now
        }
      }
      if (d.left && *d.left == 0) d.eof = true;
    }
    if (d.in_pipe > 0 && (writable || progress)) {
      ssize_t n = ::splice(d.pipe_r.get(), nullptr, d.to, nullptr, d.in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        d.in_pipe -= static_cast<size_t>(n);
        d.moved += static_cast<uint64_t>(n);
        progress = progress || readable;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return false;  // the receiver is gone
      } else {
        writable = false;  // full for now
        if (d.in_pipe >= kPipeSize) progress = false;
      }
    }
  }
  if (d.left && *d.left == 0) d.eof = true;
  if (d.eof && d.in_pipe == 0 && !d.done) {
    d.done = true;
    if (shutdown_on_done) ::shutdown(d.to, SHUT_WR);
  }
  return true;
}

}  // namespace

Ready wait_ready(int fd, short events, int stop_fd, int timeout_ms) {
  pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
  for (;;) {
    int n = ::poll(fds, 2, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return Ready::kTimedOut;
    if (n < 0 || fds[1].revents) return Ready::kStopped;
    return Ready::kYes;
  }
}

Result<UniqueFd> connect_tcp(const std::string& ip, uint16_t port, int stop_fd, int timeout_ms) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (::inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    len = sizeof(*v4);
  } else if (::inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    len = sizeof(*v6);
  } else {
    return fail("'" + ip + "' is not an IP address");
  }
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return fail_errno("create a socket");
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0) return fd;
  if (errno != EINPROGRESS) return fail_errno("connect");
  switch (wait_ready(fd.get(), POLLOUT, stop_fd, timeout_ms)) {
    case Ready::kStopped: return fail("the job ended");
    case Ready::kTimedOut: return fail_with("connect", ETIMEDOUT);
    case Ready::kYes: break;
  }
  int err = 0;
  socklen_t err_len = sizeof(err);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len);
  if (err != 0) return fail_with("connect", err);
  return fd;
}

Status send_all(int fd, std::string_view data, int stop_fd, int timeout_ms) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return fail_errno("send");
    Ready r = wait_ready(fd, POLLOUT, stop_fd, timeout_ms);
    if (r == Ready::kStopped) return fail("the job ended");
    if (r == Ready::kTimedOut) return fail_with("send", ETIMEDOUT);
  }
  return {};
}

Result<size_t> recv_some(int fd, char* buf, size_t size, int stop_fd, int timeout_ms) {
  for (;;) {
    ssize_t n = ::recv(fd, buf, size, 0);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) return 0;
    if (errno != EAGAIN) return fail_errno("receive");
    Ready r = wait_ready(fd, POLLIN, stop_fd, timeout_ms);
    if (r == Ready::kStopped) return fail("the job ended");
    if (r == Ready::kTimedOut) return fail_with("receive", ETIMEDOUT);
  }
}

Status relay(int client, int upstream, int stop_fd, const RelayOptions& opt, RelayCounts& counts) {
  Direction up, down;
  up.from = client;
  up.to = upstream;
  up.left = opt.up_limit;
  down.from = upstream;
  down.to = client;
  if (auto st = make_pipe(up); !st) return st;
  if (auto st = make_pipe(down); !st) return st;
  // A request body ends by its length, not by a half-close: some servers
  // treat a half-closed request as cancelled.
  bool tunnel = !opt.up_limit.has_value();
  Status result;
  while (!down.done) {
    pollfd fds[3] = {{stop_fd, POLLIN, 0}, {client, 0, 0}, {upstream, 0, 0}};
    if (!up.eof && up.in_pipe < kPipeSize) fds[1].events |= POLLIN;
    if (down.in_pipe > 0) fds[1].events |= POLLOUT;
    if (!down.eof && down.in_pipe < kPipeSize) fds[2].events |= POLLIN;
    if (up.in_pipe > 0) fds[2].events |= POLLOUT;
    int n = ::poll(fds, 3, opt.idle_timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result = fail_errno("poll");
      break;
    }
    if (n == 0) {
      result = fail_with("relay idle", ETIMEDOUT);
      break;
    }
    if (fds[0].revents) {
      result = fail("the job ended");
      break;
    }
    if (!up.done && !pump(up, fds[1].revents, fds[2].revents, tunnel)) break;
    if (!pump(down, fds[2].revents, fds[1].revents, true)) break;
    if (fds[1].revents & (POLLHUP | POLLERR)) break;  // the client is gone: nobody to deliver to
  }
  counts.up += up.moved;
  counts.down += down.moved;
  return result;
}

}  // namespace airlock::egress
