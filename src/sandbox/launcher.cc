#include "sandbox/launcher.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "base/check.h"
#include "sandbox/contain.h"
#include "sys/file_io.h"
#include "sys/syscalls.h"

namespace airlock::sandbox {

SandboxProcess::~SandboxProcess() {
  if (reaped_ || !pidfd_) return;
  (void)kill();
  (void)wait();
}

Result<std::optional<Msg>> SandboxProcess::read_message() {
  Msg msg{};
  for (;;) {
    ssize_t n = ::recv(sync_.get(), &msg, sizeof(msg), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ECONNRESET) return std::optional<Msg>{};
    if (n < 0) return fail_errno("read from the sandbox's init");
    if (n == 0) return std::optional<Msg>{};
    if (n != sizeof(msg)) return fail("a malformed message from the sandbox's init");
    msg.step[sizeof(msg.step) - 1] = '\0';
    return std::optional<Msg>{msg};
  }
}

Status SandboxProcess::kill() {
  if (reaped_) return {};
  auto st = sys::pidfd_send_signal(pidfd_.get(), SIGKILL);
  if (!st && st.error().err != ESRCH) return st;
  return {};
}

Result<int> SandboxProcess::wait() {
  AIRLOCK_CHECK(!reaped_);
  int status = 0;
  while (::waitpid(pid_, &status, __WALL) < 0) {
    if (errno != EINTR) return fail_errno("wait for the sandbox's init");
  }
  reaped_ = true;
  return status;
}

namespace {

Status map_ids(pid_t pid, const IdMap& ids, const SandboxSpec& spec) {
  std::string proc = "/proc/" + std::to_string(pid);
  if (auto st = sys::write_file(proc + "/uid_map", ids.uid_map(spec.uid)); !st) return st;
  return sys::write_file(proc + "/gid_map", ids.gid_map(spec.gid));
}

Status send_go(int sync_fd) {
  Msg go{};
  go.kind = MsgKind::kGo;
  if (::send(sync_fd, &go, sizeof(go), MSG_NOSIGNAL) != sizeof(go))
    return fail_errno("release the sandbox child");
  return {};
}

Status await_start(SandboxProcess& process) {
  auto msg = process.read_message();
  if (!msg) return std::unexpected(msg.error());
  if (!msg->has_value()) return fail("the sandbox's init exited before the job started");
  const Msg& m = **msg;
  if (m.kind == MsgKind::kStarted) return {};
  if (m.kind == MsgKind::kError)
    return fail_with(std::string("sandbox setup failed: ") +
                         (m.step[0] ? m.step : "start the job's process"),
                     m.value);
  return fail("an unexpected message from the sandbox's init");
}

}  // namespace

Result<SandboxProcess> launch_sandbox(LaunchRequest request) {
  AIRLOCK_CHECK(request.spec != nullptr && request.cgroup != nullptr);
  AIRLOCK_CHECK(!request.spec->argv_ptrs.empty());
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return fail_errno("create the sandbox sync socket");
  UniqueFd host_end(pair[0]), child_end(pair[1]);

  int pidfd = -1;
  clone_args args{};
  args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
               CLONE_NEWUTS | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<__u64>(&pidfd);
  args.exit_signal = SIGCHLD;
  if (int cg = request.cgroup->clone_into_fd(); cg >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<__u64>(cg);
  }
  auto pid = sys::clone3(args);
  if (!pid) return fail_with("create the sandbox (clone3)", pid.error().err);
  if (*pid == 0) {
    contain_and_run(*request.spec,
                    ChildFds{child_end.get(), request.stdout_w.get(), request.stderr_w.get()});
  }
  SandboxProcess process(*pid, UniqueFd(pidfd), std::move(host_end));
  child_end.reset();
  request.stdout_w.reset();
  request.stderr_w.reset();

  if (auto st = map_ids(*pid, request.ids, *request.spec); !st) return std::unexpected(st.error());
  if (auto st = request.cgroup->add_process(*pid); !st) return std::unexpected(st.error());
  if (auto st = send_go(process.sync_fd()); !st) return std::unexpected(st.error());
  if (auto st = await_start(process); !st) return std::unexpected(st.error());
  return process;
}

}  // namespace airlock::sandbox
