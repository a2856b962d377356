#include "pool/pool_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "base/wire.h"
#include "pool/handover.h"
#include "sys/fd_passing.h"
#include "sys/file_io.h"

namespace airlock::jobs {
namespace {

sockaddr_un address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<std::unique_ptr<PoolServer>> PoolServer::start(WarmPool& pool, const std::string& path) {
  if (path.size() >= sizeof(sockaddr_un::sun_path)) return fail("the pool socket path is too long: " + path);
  if (auto st = sys::make_dirs(path.substr(0, path.rfind('/')), 0711); !st) return std::unexpected(st.error());
  if (auto probe = connect_pool(path); probe) return fail("a warm pool already serves " + path);
  else if (probe.error().err == ECONNREFUSED) ::unlink(path.c_str());  // a dead pool's socket
  UniqueFd listen(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!listen) return fail_errno("create the pool socket");
  // Bound under a temporary name, made root-only, then renamed into place:
  // no moment where another user could connect. (Not umask: it is
  // process-wide, and the refill thread creates directories meanwhile; it
  // once made the state directory's jobs/ 0600.)
  std::string temp = path + ".new";
  ::unlink(temp.c_str());
  if (temp.size() >= sizeof(sockaddr_un::sun_path)) return fail("the pool socket path is too long: " + path);
  sockaddr_un temp_addr = address(temp);
  if (::bind(listen.get(), reinterpret_cast<sockaddr*>(&temp_addr), sizeof(temp_addr)) < 0)
    return fail_errno("bind the pool socket " + temp);
  if (::chmod(temp.c_str(), 0600) < 0 || ::rename(temp.c_str(), path.c_str()) < 0) {
    auto error = fail_errno("put the pool socket in place at " + path);
    ::unlink(temp.c_str());
    return error;
  }
  if (::listen(listen.get(), 64) < 0) return fail_errno("listen on " + path);
  struct stat bound{};
  if (::stat(path.c_str(), &bound) < 0) return fail_errno("stat " + path);
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC));
  if (!stop) return fail_errno("create an eventfd");
  auto server = std::unique_ptr<PoolServer>(new PoolServer(pool, path, std::move(listen), std::move(stop)));
  server->inode_ = bound.st_ino;
  server->thread_ = std::thread([s = server.get()] { s->serve(); });
  return server;
}

PoolServer::~PoolServer() {
  uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  struct stat now{};
  if (::stat(path_.c_str(), &now) == 0 && now.st_ino == inode_) ::unlink(path_.c_str());  // still ours
}

void PoolServer::serve() {
  for (;;) {
    std::vector<pollfd> fds = {{listen_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    for (const auto& fd : handed_over_) fds.push_back({fd.get(), POLLIN, 0});
    for (const auto& fd : runners_) fds.push_back({fd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    // A job's runner closed its connection: it is done with the sandbox
    // (its teardown included), so refills held back for it may go on.
    const size_t first_runner = 2 + handed_over_.size();
    for (size_t i = fds.size(); i-- > first_runner;) {
      if (!fds[i].revents) continue;
      runners_.erase(runners_.begin() + static_cast<ptrdiff_t>(i - first_runner));
      pool_.taken_sandbox_ended();
    }
    // A sandbox this process cloned and handed over has ended: reap its init
    // (the job's runner holds a pidfd, but only a parent can reap).
    for (size_t i = first_runner; i-- > 2;) {
      if (!fds[i].revents) continue;
      siginfo_t info{};
      (void)::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(fds[i].fd), &info, WEXITED | WNOHANG);
      handed_over_.erase(handed_over_.begin() + static_cast<ptrdiff_t>(i - 2));
    }
    if (fds[0].revents) {
      UniqueFd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (conn) answer(std::move(conn));
    }
  }
}

void PoolServer::answer(UniqueFd conn_fd) {
  const int conn = conn_fd.get();
  // A client that sends nothing must not stall the pool.
  timeval tv{1, 0};
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  auto request = sys::recv_with_fds(conn, 4096);
  if (!request) return;
  wire::Reader r(request->bytes);
  std::string verb = r.str(), key = r.str();
  // Whose preloaded sandbox (a third field; none: the state directory's own).
  std::string tenant = r.done() ? std::string() : r.str();
  Error why{"a malformed request", 0, ErrorKind::kInvalid};
  if (verb == "stats" && r.done()) {
    wire::Writer w;
    w.str("stats");
    w.str(pool_.stats().dump());
    (void)sys::send_with_fds(conn, w.take(), {});
    return;
  }
  if (verb == "take" && r.done()) {
    auto sb = pool_.take(key, tenant);
    if (!sb) why = sb.error();
    if (sb) {
      // Inits the preloaded interpreter made are its children (it reaps them).
      UniqueFd watch(sb->preloaded.has_value() ? -1
                                               : ::fcntl(sb->process->pidfd(), F_DUPFD_CLOEXEC, 3));
      if (auto st = send_prepared(conn, *sb); st) {
        if (watch) handed_over_.push_back(std::move(watch));
        runners_.push_back(std::move(conn_fd));  // the runner keeps it open while it holds the sandbox
      } else {
        std::fprintf(stderr, "airlock pool: handing over a sandbox failed: %s\n", st.error().message().c_str());
        pool_.taken_sandbox_ended();  // destroyed here, never reused
      }
      return;
    }
  }
  (void)sys::send_with_fds(conn, none_reply(why), {});
}

}  // namespace airlock::jobs
