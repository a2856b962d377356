#include "run_helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/sha256.h"
#include "sys/remove_tree.h"

namespace airlock::testing {
namespace {

std::vector<char*> c_args(std::vector<std::string>& args) {
  std::vector<char*> out;
  for (auto& a : args) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

nlohmann::json Ran::record() const {
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("stdout is not a record: " + out.substr(0, 500) + "\nstderr: " + err);
  return j;
}

OnTerminal run_on_terminal(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) < 0) throw std::runtime_error("openpty");
  termios raw{};
  ::tcgetattr(slave, &raw);
  raw.c_oflag &= ~static_cast<tcflag_t>(OPOST);  // what the program wrote, byte for byte
  ::tcsetattr(slave, TCSANOW, &raw);
  std::vector<std::string> argv = args, envv = env;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    ::dup2(slave, 1);
    ::dup2(slave, 2);
    ::close(master);
    ::close(slave);
    auto cargs = c_args(argv);
    if (envv.empty()) ::execv(cargs[0], cargs.data());
    else ::execve(cargs[0], cargs.data(), c_args(envv).data());
    ::_exit(127);
  }
  ::close(slave);
  OnTerminal r;
  char buf[65536];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 60'000) <= 0) break;
    ssize_t n = ::read(master, buf, sizeof(buf));
    if (n <= 0) break;  // EIO once every writer has closed the terminal
    r.seen.append(buf, static_cast<size_t>(n));
  }
  ::close(master);
  int ws = 0;
  ::waitpid(pid, &ws, 0);
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  return r;
}

Ran run_airlock(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {AIRLOCK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) < 0 || ::pipe2(err, O_CLOEXEC) < 0) throw std::runtime_error("pipe");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    auto cargs = c_args(argv);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Ran ran;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_count = 2;
  char buf[65536];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      } else {
        (i == 0 ? ran.out : ran.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ran.status = decode(status);
  return ran;
}

Spawned::Spawned(const std::vector<std::string>& args, const std::string& dir, std::string state_dir)
    : state_dir_(std::move(state_dir)) {
  std::vector<std::string> argv = {AIRLOCK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open((dir + "/airlock.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open((dir + "/airlock.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    auto cargs = c_args(argv);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  pid_ = pid;
}

int Spawned::wait() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  waited_ = true;
  return decode(status);
}

Spawned::~Spawned() {
  if (waited_) return;
  ::kill(pid_, SIGKILL);
  wait();
  run_airlock({"sweep", "--state-dir", state_dir_});
}

std::string default_work_dir(const std::string& node_dir) {
  return "/run/airlock/work/" + Sha256::of(node_dir).substr(0, 12);
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/airlock-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  path_ = tmpl;
  ::chmod(path_.c_str(), 0711);
  ::mkdir(state().c_str(), 0711);
}

TempDir::~TempDir() { (void)sys::remove_tree(path_); }

std::vector<pid_t> processes_of_uid(uid_t uid) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream status(std::string("/proc/") + e->d_name + "/status");
    std::string line;
    while (std::getline(status, line)) {
      // A zombie is dead already; an orphaned one waits for whoever reaps
      // orphans here (this machine's pid 1 can take seconds).
      if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos) break;
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream fields(line.substr(4));
        uid_t real = 0;
        fields >> real;
        if (real == uid) out.push_back(pid);
        break;
      }
    }
  }
  ::closedir(proc);
  return out;
}

namespace {
// "Field:" value of /proc/PID/status, first number.
long status_field(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}
}  // namespace

uid_t job_uid_of(pid_t airlock, int timeout_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    if (DIR* proc = ::opendir("/proc")) {
      while (dirent* e = ::readdir(proc)) {
        pid_t pid = std::atoi(e->d_name);
        if (pid <= 0 || status_field(pid, "PPid") != airlock) continue;
        long uid = status_field(pid, "Uid");
        // While init builds the sandbox it runs as the lease's base uid
        // (inside root); the job's uid is base + 1, always odd.
        if (uid >= 3000000 && (uid - 3000000) % 2 == 1) {
          ::closedir(proc);
          return static_cast<uid_t>(uid);
        }
      }
      ::closedir(proc);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < until);
  return 0;
}

bool no_processes_of_uid(uid_t uid, int timeout_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    if (processes_of_uid(uid).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

std::vector<std::string> cgroups_named(const std::string& name) {
  std::vector<std::string> out;
  for (const char* h : {"memory", "pids", "cpu", "cpuacct", "freezer", "unified", ""}) {
    std::string path = std::string("/sys/fs/cgroup/") + h + (*h ? "/" : "") + "airlock/" + name;
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) out.push_back(path);
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

uid_t uid_of_sandboxed_command(const std::string& cmdline) {
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  uid_t found = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string dir = std::string("/proc/") + e->d_name;
    struct stat st{};
    if (::stat(dir.c_str(), &st) < 0 || st.st_uid < 3000000) continue;
    if (read_text(dir + "/cmdline").rfind(cmdline, 0) == 0) {
      found = st.st_uid;
      break;
    }
  }
  ::closedir(d);
  return found;
}

}  // namespace airlock::testing
