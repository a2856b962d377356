#include "sandbox/init.h"

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "sandbox/narrowing.h"
#include "sandbox/protocol.h"
#include "sys/syscalls.h"

namespace airlock::sandbox {
namespace {

// Static, not heap: init never allocates (it may be a fork of a threaded
// process), and a prepared sandbox costs no memory for these until used.
char g_command[kMaxCommandBytes];
char* g_slots[kMaxCommandStrings + 4];

void send_msg(MsgKind kind, int value) {
  Msg msg{};
  msg.kind = kind;
  msg.value = value;
  ::send(kSyncFd, &msg, sizeof(msg), MSG_NOSIGNAL);
}

void write_str(const char* s) { (void)!::write(2, s, std::strlen(s)); }

ssize_t recv_retry(void* buf, size_t len) {
  ssize_t n;
  do n = ::recv(kSyncFd, buf, len, 0);
  while (n < 0 && errno == EINTR);
  return n;
}

// The job's data request channel (protocol.h, kRequestFd), when the host
// sent one with kRun: init's copy until the payload is forked, then closed.
int g_request_fd = -1;

// Receives kRun, and the request channel when the host attached one.
ssize_t recv_run(Msg* msg) {
  iovec iov{msg, sizeof(*msg)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof(control);
  ssize_t n;
  do n = ::recvmsg(kSyncFd, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&g_request_fd, CMSG_DATA(c), sizeof(int));
  return n;
}

// Waits for kRun and the command. False when the host closed the socket or
// sent something else: there is nothing to run.
bool receive_command(CommandView* command) {
  Msg msg{};
  if (recv_run(&msg) != sizeof(msg) || msg.kind != MsgKind::kRun) return false;
  ssize_t n = recv_retry(g_command, sizeof(g_command));
  if (n <= 0 || n != msg.value) return false;
  return decode_command(g_command, static_cast<size_t>(n), g_slots,
                        sizeof(g_slots) / sizeof(g_slots[0]), command);
}

// Execs the job's program; returns the errno that says why it did not run.
// Under an exec-once layer there is one exec: the first candidate that
// exists (the PATH search done here, before the exec, not by trying).
int exec_program(const CommandView& cmd) {
  if (cmd.layer_count > 0) {
    char** path = cmd.candidates;
    while (*path != nullptr && ::access(*path, F_OK) != 0) ++path;
    if (*path == nullptr) return ENOENT;
    ::execve(*path, cmd.argv, cmd.env);
    return errno;
  }
  int first_error = ENOENT;
  for (char** path = cmd.candidates; *path != nullptr; ++path) {
    ::execve(*path, cmd.argv, cmd.env);
    if (errno != ENOENT && errno != ENOTDIR) first_error = errno;
  }
  return first_error;
}

[[noreturn]] void start_payload(const SandboxSpec& spec, const CommandView& cmd, int gate_sock) {
  // The profile's narrowing, before anything of the job runs (the layer
  // then binds this process's own exec: init lets exactly that one through).
  if (narrows(cmd) && !narrow_payload(cmd, gate_sock)) {
    // Told to the host before init says kStarted (init waits for the
    // listener first): the job is then a sandbox_error, not the code's failure.
    Msg msg{};
    msg.kind = MsgKind::kError;
    msg.value = errno;
    std::strncpy(msg.step, "apply the profile's restrictions (Landlock, seccomp layer)", sizeof(msg.step) - 1);
    ::send(kSyncFd, &msg, sizeof(msg), MSG_NOSIGNAL);
    ::_exit(125);
  }
  // The sync socket and init's signalfd stay with init; the request
  // channel, if any, takes the sync socket's number in the payload.
  if (g_request_fd >= 0) {
    if (::dup2(g_request_fd, kRequestFd) < 0) {
      write_str("airlock: cannot set up the data request channel\n");
      ::_exit(126);
    }
    ::close_range(kRequestFd + 1, ~0U, 0);
  } else {
    ::close_range(3, ~0U, 0);
  }
  ::setsid();                // no controlling terminal, own process group
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  if (::chdir(cmd.cwd) < 0) {
    write_str("airlock: cannot enter the working directory\n");
    ::_exit(126);
  }
  if (spec.in_process != nullptr) {
    spec.in_process(cmd);
    ::_exit(127);  // not reached: the in-process payload exits itself
  }
  int error = exec_program(cmd);
  write_str("airlock: cannot run '");
  write_str(cmd.argv[0]);
  write_str(error == ENOENT ? "': command not found\n"
            : error == EACCES ? "': permission denied\n"
                              : "': not an executable the sandbox can run\n");
  ::_exit(error == ENOENT ? 127 : 126);
}

// The payload's own stack while it shares init's memory (spawn_payload).
// Static: init never allocates, and untouched .bss costs no memory.
alignas(64) char g_payload_stack[64 * 1024];

struct PayloadStart {
  const SandboxSpec* spec;
  const CommandView* cmd;
  int gate_sock;
};

int payload_main(void* arg) {
  const auto* start = static_cast<const PayloadStart*>(arg);
  start_payload(*start->spec, *start->cmd, start->gate_sock);
}

// Starts the payload. When it execs a program and nothing must answer it
// before that exec, it shares init's memory until the exec (CLONE_VM |
// CLONE_VFORK, as posix_spawn does, on a stack of its own; init waits): no
// page table of init is copied, write-protected and faulted back. Init
// inherited its address space from whoever cloned it, the pool's threaded
// process for a warm sandbox (hundreds of MB mapped), so that copy was the
// larger part of a warm job's start on a machine with costly page tables
// (docs/performance.md). A copy (fork) where the payload keeps running
// airlock's code (a preloaded interpreter's fork), or where init must answer
// its exec through the profile's gate, which a waiting init could not.
Result<pid_t> spawn_payload(const SandboxSpec& spec, const CommandView& cmd, int gate_sock) {
  if (spec.in_process != nullptr || narrows(cmd)) {
    auto pid = sys::raw_fork();
    if (pid && *pid == 0) start_payload(spec, cmd, gate_sock);
    return pid;
  }
  PayloadStart start{&spec, &cmd, gate_sock};
  int pid = ::clone(payload_main, g_payload_stack + sizeof(g_payload_stack),
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  if (pid < 0) return fail_errno("start the payload");
  return pid;
}

// Reaps everything that ended; true (with its status) once the payload has.
bool reap(pid_t payload, int* payload_status) {
  bool done = false;
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return done;
    if (pid == payload) {
      *payload_status = status;
      done = true;
    }
  }
}

}  // namespace

void run_init(const SandboxSpec& spec) {
  // Dispositions inherited from whoever cloned us (a Python interpreter has
  // its own handlers) go back to the defaults: as pid 1 of the namespace,
  // init then ignores every signal the job could send it.
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  ::setsid();
  ::fcntl(kSyncFd, F_SETFD, FD_CLOEXEC);
  send_msg(MsgKind::kReady, 0);
  CommandView command;
  if (!receive_command(&command)) ::_exit(0);

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sigfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) {
    send_msg(MsgKind::kError, errno);
    ::_exit(125);
  }
  // A profile's layer sends init its listener over this pair (narrowing.h).
  int gate[2] = {-1, -1};
  if (command.layer_count > 0 && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gate) < 0) {
    send_msg(MsgKind::kError, errno);
    ::_exit(125);
  }
  // Raw clones: no atfork handlers, nothing that could wait on a lock
  // inherited from a threaded parent.
  auto pid = spawn_payload(spec, command, gate[1]);
  if (!pid) {
    send_msg(MsgKind::kError, pid.error().err);
    ::_exit(125);
  }
  if (g_request_fd >= 0) ::close(g_request_fd);  // the payload's alone: the host sees its end
  int listener = -1;
  // The payload's one exec; none for a preloaded interpreter's fork, which
  // is already the program.
  int exec_budget = spec.in_process != nullptr ? 0 : 1;
  if (gate[0] >= 0) {
    ::close(gate[1]);
    listener = receive_exec_gate(gate[0]);  // -1: the payload failed before its layer
    ::close(gate[0]);
  }
  send_msg(MsgKind::kStarted, *pid);
  for (;;) {
    pollfd fds[3] = {{kSyncFd, POLLIN, 0}, {sigfd, POLLIN, 0}, {listener, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      ::_exit(125);
    }
    if (fds[0].revents) {
      Msg msg{};
      ssize_t n = recv_retry(&msg, sizeof(msg));
      if (n <= 0) ::_exit(0);  // the host is gone: end the sandbox
      if (n == sizeof(msg) && msg.kind == MsgKind::kSignal && msg.value > 0 && msg.value < NSIG)
        ::kill(-*pid, msg.value);
    }
    // POLLHUP alone: no task is under the layer any more (a receive would block).
    if (fds[2].revents != 0 &&
        ((fds[2].revents & POLLIN) == 0 || !answer_exec_gate(listener, &exec_budget))) {
      ::close(listener);
      listener = -1;
    }
    if (fds[1].revents) {
      signalfd_siginfo info;
      while (::read(sigfd, &info, sizeof(info)) > 0) {
      }
      int status = 0;
      if (reap(*pid, &status)) {
        send_msg(MsgKind::kExited, status);
        ::_exit(0);
      }
    }
  }
}

}  // namespace airlock::sandbox
