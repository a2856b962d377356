#include "sandbox/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

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
  if (is_child_) {
    while (::waitpid(pid_, &status, __WALL) < 0) {
      if (errno != EINTR) return fail_errno("wait for the sandbox's init");
    }
  } else {
    pollfd p{pidfd_.get(), POLLIN, 0};
    while (::poll(&p, 1, -1) < 0) {
      if (errno != EINTR) return fail_errno("wait for the sandbox's init");
    }
  }
  reaped_ = true;
  return status;
}

namespace {

Status send_msg(int sync_fd, MsgKind kind, int value) {
  Msg msg{};
  msg.kind = kind;
  msg.value = value;
  if (::send(sync_fd, &msg, sizeof(msg), MSG_NOSIGNAL) != sizeof(msg))
    return fail_errno("write to the sandbox's init");
  return {};
}

// Waits for `want` from init; an error for a failed step or an early exit.
Status await(SandboxProcess& process, MsgKind want, const char* what) {
  auto msg = process.read_message();
  if (!msg) return std::unexpected(msg.error());
  if (!msg->has_value()) return fail(std::string("the sandbox's init exited before ") + what);
  const Msg& m = **msg;
  if (m.kind == want) return {};
  if (m.kind == MsgKind::kError)
    return fail_with(std::string("sandbox setup failed: ") +
                         (m.step[0] ? m.step : "start the job's process"),
                     m.value);
  return fail("an unexpected message from the sandbox's init");
}

// kRun, with `fd` attached when it is >= 0.
Status send_run(int sync_fd, int size, int fd) {
  Msg msg{};
  msg.kind = MsgKind::kRun;
  msg.value = size;
  iovec iov{&msg, sizeof(msg)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  if (fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  if (::sendmsg(sync_fd, &m, MSG_NOSIGNAL) != sizeof(msg)) return fail_errno("write to the sandbox's init");
  return {};
}

}  // namespace

Status SandboxProcess::start(const Command& command, int request_fd) {
  auto encoded = encode_command(command);
  if (!encoded) return std::unexpected(encoded.error());
  if (auto st = send_run(sync_.get(), static_cast<int>(encoded->size()), request_fd); !st) return st;
  if (::send(sync_.get(), encoded->data(), encoded->size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(encoded->size()))
    return fail_errno("send the command to the sandbox");
  return await(*this, MsgKind::kStarted, "the job started");
}

Status SandboxProcess::signal_payload(int sig) {
  return send_msg(sync_.get(), MsgKind::kSignal, sig);
}

namespace {

Status map_ids(pid_t pid, const IdMap& ids, const SandboxSpec& spec) {
  std::string proc = "/proc/" + std::to_string(pid);
  if (auto st = sys::write_file(proc + "/uid_map", ids.uid_map(spec.uid)); !st) return st;
  return sys::write_file(proc + "/gid_map", ids.gid_map(spec.gid));
}

}  // namespace

Status finish_launch(SandboxProcess& process, const IdMap& ids, const SandboxSpec& spec,
                     Cgroup& cgroup, bool joined_itself) {
  if (auto st = map_ids(process.pid(), ids, spec); !st) return st;
  if (!joined_itself) {
    if (auto st = cgroup.add_process(process.pid()); !st) return st;
  }
  if (auto st = send_msg(process.sync_fd(), MsgKind::kGo, 0); !st) return st;
  if (auto st = await(process, MsgKind::kReady, "the sandbox was ready"); !st) return st;
  // Init joined its v1 groups as its first step and forks nothing before the
  // command: check that it is in every hierarchy (moving it where it is not).
  if (joined_itself) return cgroup.add_process(process.pid());
  return {};
}

Result<pid_t> clone_sandbox(const SandboxSpec& spec, int cgroup_fd, const ChildFds& fds, int* pidfd) {
  clone_args args{};
  args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
               CLONE_NEWUTS | CLONE_PIDFD;
  args.pidfd = reinterpret_cast<__u64>(pidfd);
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<__u64>(cgroup_fd);
  }
  auto pid = sys::clone3(args);
  if (!pid) return fail_with("create the sandbox (clone3)", pid.error().err);
  if (*pid == 0) contain_and_run(spec, fds);
  return *pid;
}

Result<SandboxProcess> launch_sandbox(LaunchRequest request) {
  AIRLOCK_CHECK(request.spec != nullptr && request.cgroup != nullptr);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return fail_errno("create the sandbox sync socket");
  UniqueFd host_end(pair[0]), child_end(pair[1]);

  auto join = request.cgroup->open_self_join();
  if (!join) return std::unexpected(join.error());
  ChildFds fds{child_end.get(), request.stdout_w.get(), request.stderr_w.get(), request.stdin_r.get(),
               host_end.get()};
  AIRLOCK_CHECK(join->size() <= static_cast<size_t>(ChildFds::kMaxCgroupJoin));
  for (const UniqueFd& fd : *join) fds.cgroup_join[fds.cgroup_join_count++] = fd.get();
  int pidfd = -1;
  auto pid = clone_sandbox(*request.spec, request.cgroup->clone_into_fd(), fds, &pidfd);
  join->clear();
  if (!pid) return std::unexpected(pid.error());
  SandboxProcess process(*pid, UniqueFd(pidfd), std::move(host_end));
  child_end.reset();
  request.stdout_w.reset();
  request.stderr_w.reset();
  request.stdin_r.reset();

  if (auto st = finish_launch(process, request.ids, *request.spec, *request.cgroup, true); !st)
    return std::unexpected(st.error());
  return process;
}

}  // namespace airlock::sandbox
