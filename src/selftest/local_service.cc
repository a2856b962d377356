#include "selftest/local_service.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "store/store.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"

namespace airlock::selftest {

namespace {

std::string random_hex(size_t n) {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += hex[rd() & 0xf];
  return s;
}

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

Result<std::unique_ptr<LocalService>> LocalService::start(const std::string& airlock_binary,
                                                          const std::string& config_path,
                                                          const std::string& canary_prefix) {
  std::unique_ptr<LocalService> s(new LocalService());
  char tmpl[] = "/tmp/airlock-selftest-XXXXXX";
  if (!::mkdtemp(tmpl)) return fail_errno("make a temporary directory");
  s->dir_ = tmpl;
  s->stopped_ = true;  // nothing to stop yet; the directory goes with the object
  // mkdtemp gives 0700; the sandbox's uid must reach the state directory.
  if (::chmod(tmpl, 0711) != 0) return fail_errno("chmod " + s->dir_);
  s->data_dir_ = s->dir_ + "/data";
  s->state_dir_ = s->dir_ + "/state";
  s->log_ = s->dir_ + "/serve.log";
  for (const auto& d : {s->data_dir_, s->state_dir_, s->dir_ + "/work"}) {
    if (::mkdir(d.c_str(), 0711) != 0) return fail_errno("mkdir " + d);
    if (::chmod(d.c_str(), 0711) != 0) return fail_errno("chmod " + d);
  }

  // Two tenants, a key each (scopes run and read), as `airlock keys create` makes them.
  {
    auto store = store::Store::open(s->data_dir_);
    if (!store) return std::unexpected(store.error());
    for (const auto& [name, key] : std::vector<std::pair<std::string, std::string*>>{
             {"selftest", &s->key_}, {"selftest-other", &s->other_key_}}) {
      auto tenant = (*store)->create_tenant(name, {});
      if (!tenant) return std::unexpected(tenant.error());
      auto created = (*store)->create_key(tenant->id, "selftest", {"run", "read"});
      if (!created) return std::unexpected(created.error());
      *key = created->second;
    }
  }
  std::string canary = canary_prefix + random_hex(32);
  if (auto st = sys::write_file_atomic(s->data_dir_ + "/selftest-canary", canary + "\n", 0600); !st) return std::unexpected(st.error());

  // The operator's configuration, with the work directory inside ours
  // (top-level keys go first: after a [table] they would belong to it).
  std::string config = "work_dir = " + toml_string(s->dir_ + "/work") + "\n";
  if (!config_path.empty()) {
    auto text = sys::read_file(config_path, 1 << 20);
    if (!text) return std::unexpected(text.error());
    config += *text;
  }
  std::string config_file = s->dir_ + "/serve.toml";
  if (auto st = sys::write_file_atomic(config_file, config, 0600); !st) return std::unexpected(st.error());

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return fail_errno("pipe");
  std::vector<std::string> args = {airlock_binary, "serve", "--config", config_file, "--listen", "127.0.0.1:0",
                                   "--data-dir", s->data_dir_, "--state-dir", s->state_dir_,
                                   // A configuration's shared content_dir (a cluster's) is not the selftest's to write.
                                   "--content-dir", s->data_dir_};
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork");
  if (pid == 0) {
    // The serve dies with the selftest, whatever happens to it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(out[1], 1);
    int log = ::open(s->log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log >= 0) ::dup2(log, 2);
    ::setenv("AIRLOCK_SELFTEST_CANARY", canary.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  s->pid_ = pid;
  s->stopped_ = false;
  std::string line;
  char c;
  while (line.size() < 4096 && ::read(out[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(out[0]);
  auto at = line.find("127.0.0.1:");
  if (at == std::string::npos) {
    auto log = sys::read_file(s->log_, 4096);
    return fail("airlock serve did not start: " + (log ? *log : line));
  }
  s->port_ = static_cast<uint16_t>(std::atoi(line.c_str() + at + 10));
  return s;
}

std::string LocalService::stop() {
  std::string problems;
  if (!stopped_ && pid_ > 0) {
    stopped_ = true;
    ::kill(pid_, SIGTERM);
    int status = 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    pid_t got = 0;
    while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (got == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      problems += "airlock serve did not stop within 15 s of SIGTERM (killed); ";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      problems += "airlock serve ended with status " + std::to_string(status) + "; ";
    }
  }
  if (!dir_.empty()) {
    if (auto st = sys::remove_tree(dir_); !st) problems += "remove " + dir_ + ": " + st.error().message();
    dir_.clear();
  }
  return problems;
}

LocalService::~LocalService() { (void)stop(); }

}  // namespace airlock::selftest
