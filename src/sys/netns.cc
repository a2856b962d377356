#include "sys/netns.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

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

}  // namespace airlock::sys
