#include "images/tool_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>

#include "base/unique_fd.h"

namespace airlock::images {
namespace {

constexpr size_t kTailLines = 40;
constexpr int kPollMs = 200;
constexpr auto kTermGrace = std::chrono::seconds(10);

struct Stream {
  UniqueFd fd;
  std::string pending;
  std::function<void(std::string_view)> sink;
};

void deliver(Stream& s, std::deque<std::string>& tail, bool flush) {
  size_t start = 0;
  for (size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(s.pending.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (s.sink) s.sink(line);
    tail.emplace_back(line);
    if (tail.size() > kTailLines) tail.pop_front();
  }
  s.pending.erase(0, start);
  if (flush && !s.pending.empty()) {
    s.pending += '\n';
    deliver(s, tail, false);
  }
}

}  // namespace

Result<ToolExit> run_tool(const ToolRun& run) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) < 0) return fail_errno("pipe");
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) < 0) return fail_errno("pipe");
  UniqueFd err_r(err[0]), err_w(err[1]);

  std::vector<std::string> env = run.env;
  if (env.empty())
    env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"};
  std::vector<char*> argv, envp;
  for (const std::string& a : run.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return fail_with("start " + run.argv[0], rc);
  out_w.reset();
  err_w.reset();

  ToolExit result;
  std::deque<std::string> tail;
  Stream streams[2] = {{std::move(out_r), {}, run.on_stdout},
                       {std::move(err_r), {}, run.on_stderr ? run.on_stderr : run.on_stdout}};
  std::chrono::steady_clock::time_point term_at{};
  bool killed = false;
  while (streams[0].fd || streams[1].fd) {
    if (run.interrupted && run.interrupted->load() && !result.interrupted) {
      result.interrupted = true;
      ::kill(-pid, SIGTERM);
      term_at = std::chrono::steady_clock::now();
    }
    if (result.interrupted && !killed && std::chrono::steady_clock::now() - term_at > kTermGrace) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    pollfd fds[2];
    int n = 0;
    int index[2];
    for (int i = 0; i < 2; ++i)
      if (streams[i].fd) {
        fds[n] = {streams[i].fd.get(), POLLIN, 0};
        index[n++] = i;
      }
    int ready = ::poll(fds, static_cast<nfds_t>(n), kPollMs);
    if (ready < 0 && errno != EINTR) return fail_errno("poll");
    for (int k = 0; ready > 0 && k < n; ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = streams[index[k]];
      char buf[16384];
      ssize_t got = ::read(s.fd.get(), buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        deliver(s, tail, true);
        s.fd.reset();
        continue;
      }
      s.pending.append(buf, static_cast<size_t>(got));
      deliver(s, tail, false);
    }
  }
  // Wait without reaping: while the leader is a zombie its group id cannot be
  // reused, so whatever of its group is left (a daemon it started) can be
  // ended safely before the leader is reaped.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) return fail_errno("wait for " + run.argv[0]);
    if (run.interrupted && run.interrupted->load() && !result.interrupted) {
      result.interrupted = true;
      ::kill(-pid, SIGTERM);
    }
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fail_errno("wait for " + run.argv[0]);
  if (WIFEXITED(status)) result.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (run.interrupted && run.interrupted->load()) result.interrupted = true;
  for (const std::string& line : tail) result.tail += line + "\n";
  return result;
}

std::string tool_version(const std::vector<std::string>& argv) {
  ToolRun run;
  run.argv = argv;
  std::string first;
  run.on_stdout = [&](std::string_view line) {
    if (first.empty() && !line.empty()) first = std::string(line);
  };
  auto exit = run_tool(run);
  if (!exit || first.empty()) return "unknown";
  return first;
}

}  // namespace airlock::images
