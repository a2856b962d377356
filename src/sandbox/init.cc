#include "sandbox/init.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "sandbox/protocol.h"
#include "sys/syscalls.h"

namespace airlock::sandbox {
namespace {

void send_msg(MsgKind kind, int value) {
  Msg msg{};
  msg.kind = kind;
  msg.value = value;
  ::send(kSyncFd, &msg, sizeof(msg), MSG_NOSIGNAL);
}

void write_str(const char* s) { (void)!::write(2, s, std::strlen(s)); }

[[noreturn]] void exec_payload(const SandboxSpec& spec) {
  ::setsid();  // no controlling terminal, own process group
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  if (::chdir(spec.cwd.c_str()) < 0) {
    write_str("airlock: cannot enter the working directory\n");
    ::_exit(126);
  }
  int first_error = ENOENT;
  for (const auto& path : spec.exec_candidates) {
    ::execve(path.c_str(), spec.argv_ptrs.data(), spec.env_ptrs.data());
    if (errno != ENOENT && errno != ENOTDIR) first_error = errno;
  }
  write_str("airlock: cannot run '");
  write_str(spec.argv.empty() ? "" : spec.argv[0].c_str());
  write_str(first_error == ENOENT ? "': command not found\n"
            : first_error == EACCES ? "': permission denied\n"
                                    : "': not an executable the sandbox can run\n");
  ::_exit(first_error == ENOENT ? 127 : 126);
}

}  // namespace

void run_init(const SandboxSpec& spec) {
  ::setsid();
  ::fcntl(kSyncFd, F_SETFD, FD_CLOEXEC);  // the payload must not inherit it
  // A raw clone: no atfork handlers, nothing that could wait on a lock
  // inherited from a threaded parent.
  auto pid = sys::raw_fork();
  if (!pid) {
    send_msg(MsgKind::kError, pid.error().err);
    ::_exit(125);
  }
  if (*pid == 0) exec_payload(spec);
  send_msg(MsgKind::kStarted, *pid);
  for (;;) {
    int status = 0;
    pid_t done = ::waitpid(-1, &status, 0);
    if (done == *pid) {
      send_msg(MsgKind::kExited, status);
      ::_exit(0);
    }
    if (done < 0 && errno != EINTR) ::_exit(125);
  }
}

}  // namespace airlock::sandbox
