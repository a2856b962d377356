#include "pool/handover.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <bit>
#include <cstring>

#include "base/check.h"
#include "base/wire.h"
#include "sys/fd_passing.h"

namespace airlock::jobs {
namespace {

constexpr size_t kMaxMessage = 64 * 1024;
constexpr size_t kFdCount = 11;

}  // namespace

std::string pool_socket_path(const std::string& state_dir) { return state_dir + "/pool.sock"; }

Result<UniqueFd> connect_pool(const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) return fail("the pool socket path is too long");
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  UniqueFd sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!sock) return fail_errno("create a socket for the warm pool");
  if (::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0) {
    if (errno == ENOENT || errno == ECONNREFUSED)
      return std::unexpected(Error{"no warm pool is running", errno, ErrorKind::kNotFound});
    return fail_with(std::string("cannot reach the warm pool: ") + std::strerror(errno), errno);
  }
  return sock;
}


std::string none_reply(const Error& why) {
  wire::Writer w;
  w.str("none");
  w.str(why.what);
  w.u32(static_cast<uint32_t>(why.kind));
  return w.take();
}

namespace {

// The kind a "none" answer names; a number this build does not know is a
// malformed answer (kInternal), never a reason to wait.
ErrorKind none_kind(uint32_t n) {
  switch (static_cast<ErrorKind>(n)) {
    case ErrorKind::kUnavailable: return ErrorKind::kUnavailable;
    case ErrorKind::kNotFound: return ErrorKind::kNotFound;
    case ErrorKind::kInvalid: return ErrorKind::kInvalid;
    default: return ErrorKind::kInternal;
  }
}

}  // namespace

Status send_prepared(int sock, PreparedSandbox& sb) {
  AIRLOCK_CHECK(sb.process && sb.dir && sb.lease && sb.cgroup);
  wire::Writer w;
  w.str("sandbox");
  w.str(sb.id);
  w.str(sb.class_key);
  w.u32(!sb.preloaded ? 0 : *sb.preloaded == Preload::kData ? 1 : 2);  // which interpreter
  w.str(sb.image.name);
  w.str(sb.image.digest);
  w.u32(sb.lease->slot());
  w.u32(static_cast<uint32_t>(sb.process->pid()));
  w.str(sb.dir->path());
  // The limits it has, so that a job with the same ones changes nothing (fit_to_policy).
  w.u64(sb.limits.cgroup.memory_bytes);
  w.u64(sb.limits.cgroup.pids);
  w.u64(std::bit_cast<uint64_t>(sb.limits.cgroup.cpus));
  w.u64(sb.limits.input_bytes);
  w.u64(sb.limits.input_inodes);
  w.u64(sb.limits.work_bytes);
  std::vector<int> fds = {sb.process->pidfd(),      sb.process->sync_fd(),  sb.stdout_r.get(),
                          sb.stderr_r.get(),        sb.mounts.inputs.get(), sb.mounts.output.get(),
                          sb.mounts.workspace.get(), sb.mounts.tmp.get(),   sb.mounts.shm.get(),
                          sb.dir->lock_fd(),        sb.lease->lock_fd()};
  if (auto st = sys::send_with_fds(sock, w.take(), fds); !st) return st;
  // The receiver owns everything now: give up our handles without killing.
  (void)sb.process->release_pidfd();
  (void)sb.process->release_sync();
  sb.process.reset();
  sb.cgroup->release();
  sb.cgroup.reset();
  sb.dir->release();
  sb.dir.reset();
  return {};
}

Result<PreparedSandbox> receive_prepared(int sock, sandbox::CgroupBackend& cgroups) {
  auto msg = sys::recv_with_fds(sock, kMaxMessage);
  if (!msg) return std::unexpected(msg.error());
  wire::Reader r(msg->bytes);
  std::string kind = r.str();
  if (kind == "none") {
    std::string why = r.str();
    uint32_t n = r.u32();
    if (!r.done()) return fail("the warm pool sent a malformed answer");
    return fail(none_kind(n), why);
  }
  PreparedSandbox sb;
  sb.id = r.str();
  sb.class_key = r.str();
  uint32_t preloaded = r.u32();
  if (preloaded > 2) return fail("the warm pool sent a malformed answer");
  if (preloaded != 0) sb.preloaded = preloaded == 1 ? Preload::kData : Preload::kStdlib;
  sb.image.name = r.str();
  sb.image.digest = r.str();
  unsigned slot = r.u32();
  pid_t pid = static_cast<pid_t>(r.u32());
  std::string dir = r.str();
  sb.limits.cgroup.memory_bytes = r.u64();
  sb.limits.cgroup.pids = r.u64();
  sb.limits.cgroup.cpus = std::bit_cast<double>(r.u64());
  sb.limits.input_bytes = r.u64();
  sb.limits.input_inodes = r.u64();
  sb.limits.work_bytes = r.u64();
  if (kind != "sandbox" || !r.done() || msg->fds.size() != kFdCount)
    return fail("the warm pool sent a malformed sandbox");
  auto& f = msg->fds;
  // Ownership first (so a failure below still cleans up), then the cgroup.
  sb.lease.emplace(UidLease::adopt(slot, std::move(f[10])));
  sb.dir.emplace(JobDir::adopt(dir, std::move(f[9])));
  sb.mounts.inputs = std::move(f[4]);
  sb.mounts.output = std::move(f[5]);
  sb.mounts.workspace = std::move(f[6]);
  sb.mounts.tmp = std::move(f[7]);
  sb.mounts.shm = std::move(f[8]);
  sb.stdout_r = std::move(f[2]);
  sb.stderr_r = std::move(f[3]);
  sb.process.emplace(pid, std::move(f[0]), std::move(f[1]), /*is_child=*/false);
  auto group = cgroups.open(sb.id);
  if (!group) return std::unexpected(group.error());
  sb.cgroup = std::move(*group);
  return sb;
}

Result<PreparedSandbox> take_from_pool(const std::string& socket_path, const std::string& class_key,
                                       sandbox::CgroupBackend& cgroups, const std::string& tenant) {
  auto sock = connect_pool(socket_path);
  if (!sock) return std::unexpected(sock.error());
  // A pool that stopped answering must not hang the job: it starts cold.
  timeval tv{10, 0};
  ::setsockopt(sock->get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  wire::Writer w;
  w.str("take");
  w.str(class_key);
  w.str(tenant);
  if (auto st = sys::send_with_fds(sock->get(), w.take(), {}); !st) return std::unexpected(st.error());
  auto sb = receive_prepared(sock->get(), cgroups);
  if (!sb && sb.error().kind == ErrorKind::kInternal)  // not a "none": no answer in time, or garbage
    return fail("the warm pool did not answer: " + sb.error().message());
  if (sb) sb->pool_link = std::move(*sock);
  return sb;
}

Result<std::string> pool_stats(const std::string& socket_path) {
  auto sock = connect_pool(socket_path);
  if (!sock) return std::unexpected(sock.error());
  timeval tv{10, 0};
  ::setsockopt(sock->get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  wire::Writer w;
  w.str("stats");
  w.str("");
  if (auto st = sys::send_with_fds(sock->get(), w.take(), {}); !st) return std::unexpected(st.error());
  auto reply = sys::recv_with_fds(sock->get(), 1 << 20);
  if (!reply) return std::unexpected(reply.error());
  wire::Reader r(reply->bytes);
  std::string kind = r.str(), text = r.str();
  if (kind != "stats" || !r.done()) return fail("the warm pool sent a malformed answer");
  return text;
}

}  // namespace airlock::jobs
