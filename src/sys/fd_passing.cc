#include "sys/fd_passing.h"

#include <sys/socket.h>

#include <cstring>
#include <memory>

namespace airlock::sys {

Status send_with_fds(int sock, std::string_view bytes, const std::vector<int>& fds) {
  if (fds.size() > kMaxPassedFds) return fail("too many descriptors for one message");
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) return fail_errno("send a message with descriptors");
  if (static_cast<size_t>(n) != bytes.size()) return fail("a message with descriptors was cut short");
  return {};
}

Result<Received> recv_with_fds(int sock, size_t max_bytes) {
  Received out;
  // Not zero-filled first: only the bytes that arrive are written. The
  // preloaded interpreter receives with a 1 MiB limit, and its heap is shared
  // copy-on-write with every sandbox cloned from it: filling the buffer copied
  // all 257 pages at each request, each copy a TLB shootdown (13 ms per
  // request on a paravirtualized 2-core VM; docs/performance.md).
  std::unique_ptr<char[]> buffer(new char[max_bytes + 1]);
  iovec iov{buffer.get(), max_bytes + 1};
  char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return fail_errno("receive a message with descriptors");
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return fail("a message with descriptors was too large");
  out.bytes.assign(buffer.get(), static_cast<size_t>(n));
  ::explicit_bzero(buffer.get(), static_cast<size_t>(n));  // one copy left: the caller's
  return out;
}

}  // namespace airlock::sys
