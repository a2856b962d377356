// The ctest fixture of one PostgreSQL server for the whole run (tests/CMakeLists.txt):
//
//   postgres_fixture start DIR   removes what a killed run left in DIR, starts a
//                                keeper process that starts the server in DIR and
//                                writes DIR/url (its URL, or "skip: why" when no
//                                server is installed); returns once it is written
//   postgres_fixture stop DIR    ends the keeper (by the pid in DIR/keeper.pid),
//                                which stops the server; then removes DIR
//
// The keeper is the server's parent (the server dies with it, PDEATHSIG) and
// watches the process that ran `start` (ctest): when ctest ends without running
// the cleanup (interrupted), the keeper stops the server and removes DIR itself.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "support/postgres_server.h"

namespace {

using airlock::testing::PostgresServer;

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Written whole or not at all (a reader never sees half a line).
bool write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

// The keeper of DIR: a live process whose command line is this program's
// `start DIR` (so a recycled pid of some other process is never signalled).
pid_t live_keeper(const std::string& dir) {
  std::string text = read_file(dir + "/keeper.pid");
  pid_t pid = static_cast<pid_t>(std::atol(text.c_str()));
  if (pid <= 1) return -1;
  std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::string want = std::string("start") + '\0' + dir + '\0';
  if (cmdline.size() < want.size() || cmdline.compare(cmdline.size() - want.size(), want.size(), want) != 0)
    return -1;
  return pid;
}

// SIGTERM to the keeper and wait (on a pidfd: it is not our child) until it is
// gone; it stops its server first. SIGKILL after 60 s: the server then dies by
// PDEATHSIG.
bool end_keeper(pid_t pid) {
  int fd = pidfd_open(pid);
  if (fd < 0) return true;  // already gone
  ::kill(pid, SIGTERM);
  pollfd p{fd, POLLIN, 0};
  bool ended = ::poll(&p, 1, 60000) == 1;
  if (!ended) {
    std::fprintf(stderr, "postgres_fixture: keeper %d ignored SIGTERM for 60 s: killed\n", pid);
    ::kill(pid, SIGKILL);
    ::poll(&p, 1, 10000);
  }
  ::close(fd);
  return ended;
}

// A server an earlier run left running in DIR (its keeper killed before the
// server had a parent-death signal): found by its own postmaster.pid, and
// stopped only when its command line names DIR.
void stop_stale_servers(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.path().filename().string().starts_with("airlock-pg-")) continue;
    std::string data = entry.path().string() + "/data";
    pid_t pid = static_cast<pid_t>(std::atol(read_file(data + "/postmaster.pid").c_str()));
    if (pid <= 1) continue;
    if (read_file("/proc/" + std::to_string(pid) + "/cmdline").find(data) == std::string::npos) continue;
    int fd = pidfd_open(pid);
    if (fd < 0) continue;
    std::printf("postgres_fixture: stopping the server (%d) an earlier run left\n", pid);
    ::kill(pid, SIGINT);  // fast shutdown
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) != 1) ::kill(pid, SIGKILL);
    ::close(fd);
  }
}

// DIR must be ours (a directory this user owns, not a link someone planted in /tmp).
bool check_ours(const std::string& dir) {
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return true;  // absent: fine
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    std::fprintf(stderr, "postgres_fixture: %s is not a directory of this user: refusing to use it\n", dir.c_str());
    return false;
  }
  return true;
}

int stop(const std::string& dir) {
  if (!check_ours(dir)) return 1;
  int rc = 0;
  if (pid_t k = live_keeper(dir); k > 0) {
    if (!end_keeper(k)) rc = 1;
    std::printf("postgres_fixture: keeper %d ended\n", k);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) {
    std::fprintf(stderr, "postgres_fixture: remove %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  std::printf("postgres_fixture: %s removed\n", dir.c_str());
  return rc;
}

// The keeper: starts the server, says how it went on `ready`, then waits for
// SIGTERM (the cleanup), the watched process's end, or the server's own end.
[[noreturn]] void keep(const std::string& dir, int ready, int watched) {
  ::setsid();
  std::string log = dir + "/keeper.log";
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // ctest reads the setup test's output until every writer closes it: the
  // keeper must hold none of ctest's pipes.
  ::dup2(null, 0);
  ::dup2(out, 1);
  ::dup2(out, 2);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  int sigfd = ::signalfd(-1, &set, SFD_CLOEXEC);
  ::setenv("TMPDIR", dir.c_str(), 1);  // the server's own directory goes inside DIR
  auto server = PostgresServer::start();
  std::string said;
  if (server) {
    write_file(dir + "/url", airlock::testing::shared_server_file_text(server.value()->port()));
    said = "ok server pid " + std::to_string(server.value()->pid());
  } else if (server.error().kind == airlock::ErrorKind::kNotFound) {
    write_file(dir + "/url", "skip: " + server.error().message() + "\n");
    said = "ok skip: " + server.error().message();
  } else {
    said = "failed: " + server.error().message();
  }
  (void)!::write(ready, said.data(), said.size());
  ::close(ready);
  if (!server) ::_exit(0);
  int serverfd = pidfd_open(server.value()->pid());
  pollfd p[3] = {{sigfd, POLLIN, 0}, {watched, POLLIN, 0}, {serverfd, POLLIN, 0}};
  while (::poll(p, 3, -1) < 0 && errno == EINTR) {
  }
  bool interrupted = p[1].revents != 0;
  if (p[2].revents) std::fprintf(stderr, "postgres_fixture: the server ended on its own\n");
  server.value().reset();  // SIGINT, wait, remove its directory
  if (interrupted) {
    // No cleanup test will come: leave nothing behind.
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  ::_exit(0);
}

int start(const std::string& dir) {
  if (!check_ours(dir)) return 1;
  if (pid_t k = live_keeper(dir); k > 0) {
    std::printf("postgres_fixture: a keeper (%d) of an earlier run is still there: ending it\n", k);
    end_keeper(k);
  }
  stop_stale_servers(dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) std::printf("postgres_fixture: removing what an earlier run left in %s\n", dir.c_str());
  std::filesystem::remove_all(dir, ec);
  // 0711: the server's user (postgres, as root) passes through to its own directory.
  if (::mkdir(dir.c_str(), 0711) != 0 || ::chmod(dir.c_str(), 0711) != 0) {
    std::perror(("postgres_fixture: mkdir " + dir).c_str());
    return 1;
  }
  int watched = pidfd_open(::getppid());
  if (watched < 0) {
    std::perror("postgres_fixture: pidfd_open of the parent");
    return 1;
  }
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return 1;
  pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    ::close(pipefd[0]);
    keep(dir, pipefd[1], watched);
  }
  ::close(pipefd[1]);
  write_file(dir + "/keeper.pid", std::to_string(pid) + "\n");
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  std::printf("postgres_fixture: keeper %d: %s\n", pid, said.empty() ? "ended without a word" : said.c_str());
  if (said.starts_with("ok")) return 0;
  std::printf("%s", read_file(dir + "/keeper.log").c_str());
  stop(dir);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: postgres_fixture start|stop DIR\n");
    return 2;
  }
  std::string verb = argv[1], dir = argv[2];
  if (dir.empty() || dir[0] != '/') {
    std::fprintf(stderr, "postgres_fixture: DIR must be an absolute path\n");
    return 2;
  }
  if (verb == "start") return start(dir);
  if (verb == "stop") return stop(dir);
  std::fprintf(stderr, "usage: postgres_fixture start|stop DIR\n");
  return 2;
}
