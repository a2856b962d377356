#include "service/job_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/syscalls.h"

namespace airlock::service {

namespace {

struct ChildSetup {
  pid_t parent;
  int out, err;
  char** argv;
  char** envp;
};

// Runs in the child, on its own stack but in the service's memory: only
// async-signal-safe calls, nothing written but locals.
int child_main(void* arg) {
  auto* s = static_cast<ChildSetup*>(arg);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != s->parent) ::_exit(125);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(s->out, 1) < 0 || ::dup2(s->err, 2) < 0) ::_exit(125);
  ::close_range(3, ~0U, 0);
  ::execve(s->argv[0], s->argv, s->envp);
  ::_exit(127);
}

}  // namespace

Result<JobProcess> JobProcess::spawn(const std::string& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path_env = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path_env.data(), nullptr};

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return fail_errno("create a pipe");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) < 0) return fail_errno("create a pipe");
  UniqueFd err_r(err[0]), err_w(err[1]);
  ChildSetup setup{::getpid(), out_w.get(), err_w.get(), argv.data(), envp};

  // CLONE_VM|CLONE_VFORK: no copy of the service's page tables (about 0.3 ms
  // saved per job); the parent waits until the child has exec'd.
  std::vector<char> stack(64 << 10);
  int pidfd = -1;
  pid_t pid = ::clone(child_main, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                      &setup, &pidfd);
  if (pid < 0) return fail_errno("start the job's airlock");
  UniqueFd owned_pidfd(pidfd);
  out_w.reset();
  err_w.reset();
  return JobProcess(pid, std::move(owned_pidfd), std::move(out_r), std::move(err_r));
}

JobProcess::~JobProcess() {
  if (reaped_ || !pidfd_) return;
  (void)sys::pidfd_send_signal(pidfd_.get(), SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

Result<int> JobProcess::pump_and_wait(LogBuffer& log) {
  char buf[65536];
  while (out_ || err_) {
    pollfd fds[2] = {{out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail_errno("poll the job's output");
    }
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      UniqueFd& fd = i == 0 ? out_ : err_;
      ssize_t n = ::read(fd.get(), buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fd.reset();
      else log.append(i == 1, std::string_view(buf, static_cast<size_t>(n)));
    }
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return fail_errno("wait for the job's airlock");
  }
  reaped_ = true;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

Status JobProcess::cancel() {
  cancel_requested_ = true;
  // Through the pidfd: safe even if the process has ended meanwhile.
  auto st = sys::pidfd_send_signal(pidfd_.get(), SIGTERM);
  if (!st && st.error().err != ESRCH) return st;
  return {};
}

}  // namespace airlock::service
