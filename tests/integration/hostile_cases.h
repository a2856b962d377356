// The hostile suite's cases as data (tests/hostile/README.md): parsing a
// case's header, checking a job record against its verdict, and checking the
// host for what a job left behind. Used by the suite through `airlock run`
// (hostile_test.cc) and through the API (service_hostile_test.cc).
#pragma once

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace airlock::testing::hostile {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::filesystem::path cases_dir();  // tests/hostile/cases
std::filesystem::path data_dir();   // tests/hostile/data

// HOSTILE_PROFILE=compute: every case runs under that profile. A case whose
// verdict differs there says so with "<profile>-<key>" headers (e.g.
// "compute-expect-stdout"), which then replace the plain key.
std::string profile_name();

struct Case {
  std::string file;  // e.g. read_etc_shadow.py
  std::string test_name;
  std::map<std::string, std::vector<std::string>> header;

  // Under a profile, "<profile>-<key>" replaces "<key>"; a case that has
  // "<profile>-expect-outcome" gives its whole verdict there, so its plain
  // expect-* keys do not apply under that profile.
  std::vector<std::string> all(const std::string& key) const {
    const std::string p = profile_name();
    auto it = header.find(p + "-" + key);
    if (!p.empty() && it == header.end() && key.starts_with("expect-") && header.count(p + "-expect-outcome"))
      return {};
    if (p.empty() || it == header.end()) it = header.find(key);
    return it == header.end() ? std::vector<std::string>{} : it->second;
  }
  std::optional<std::string> one(const std::string& key) const {
    auto values = all(key);
    if (values.empty()) return std::nullopt;
    return values.back();
  }
};

void PrintTo(const Case& c, std::ostream* os);

std::vector<std::string> split_words(const std::string& s);
std::vector<std::string> split_alternatives(const std::string& s);
std::string lower(std::string s);
// Header: the leading comment lines; "# key: value" (key of [a-z-]), other
// comment lines are prose. A "#!" line is skipped.
Case parse_case(const std::filesystem::path& path);
std::vector<Case> load_cases();  // every .py and .sh case, by file name

std::string read_file(const std::filesystem::path& p);

// "# requires: WHAT": what the case needs of the machine itself, outside any
// sandbox. The reason it is missing here, or nullopt. Known: `int80` (the
// 32-bit syscall instruction runs a syscall; some virtual machines fault it
// with SIGSEGV, and then no filter is reached by it).
std::optional<std::string> unmet_requirement(const std::string& what);
std::string text_of(const nlohmann::json& record, const char* stream);  // a stream's exact bytes

// The record against the case's expect-* headers (outcome, reason, stdout,
// stderr, limits, signal, exit code, truncation, output verdicts).
void expect_verdict(const Case& c, const nlohmann::json& record, const std::string& context);

// Mount lines of this process's mount table that name airlock, but the
// machine's shared image mounts (kept on purpose: sandbox/shared_image.h).
std::vector<std::string> airlock_mounts();
// No process of the job's host uid, no mount of it (or new since
// `mounts_before`), no cgroup named after its record id is left.
void expect_nothing_left(const nlohmann::json& record, const std::vector<std::string>& mounts_before,
                         const std::string& context);

constexpr uid_t kCanaryUid = 1000;  // a host uid the sandbox must not reach

inline std::string random_hex(size_t bytes) {
  std::random_device rd;
  std::string out;
  const char* digits = "0123456789abcdef";
  for (size_t i = 0; i < bytes; ++i) {
    unsigned v = rd() & 0xff;
    out += digits[v >> 4];
    out += digits[v & 15];
  }
  return out;
}

// A pipe kernel.core_pattern for one case: the kernel then runs `helper` (as
// root, on the host) for every process that dumps core, however its
// RLIMIT_CORE is set unless it is exactly 1. The helper leaves a marker named
// after the dumping process's host uid. The host's pattern is put back in the
// destructor, also when the case failed.
struct PipeCorePattern {
  static constexpr const char* kPatternFile = "/proc/sys/kernel/core_pattern";
  fs::path dir;
  std::string saved;
  bool active = false;

  PipeCorePattern() = default;
  PipeCorePattern(const PipeCorePattern&) = delete;
  PipeCorePattern& operator=(const PipeCorePattern&) = delete;
  ~PipeCorePattern() {
    if (active) {
      std::ofstream(kPatternFile) << saved;
      active = false;
    }
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }

  fs::path marker(uid_t uid) const { return dir / ("dumped-uid-" + std::to_string(uid)); }

  bool wait_for_marker(uid_t uid, int ms) const {
    for (int waited = 0;; waited += 10) {
      std::error_code ec;
      if (fs::exists(marker(uid), ec)) return true;
      if (waited >= ms) return false;
      usleep(10'000);
    }
  }

  void start() {
    std::string tmpl = (fs::temp_directory_path() / "airlock-core-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << strerror(errno);
    dir = tmpl;
    fs::path helper = dir / "helper";
    // The kernel starts the helper in its own root, which is not this
    // process's root when the tests run in a chroot: both the helper and its
    // marker are named through /proc/<pid>/root, which is "/" on a plain host.
    const std::string root = "/proc/" + std::to_string(::getpid()) + "/root";
    std::ofstream(helper) << "#!/bin/sh\n: > \"" << root << dir.string() << "/dumped-uid-$1\"\nexec cat > /dev/null\n";
    ASSERT_EQ(::chmod(helper.c_str(), 0755), 0) << strerror(errno);
    std::ifstream in(kPatternFile);
    std::getline(in, saved);
    ASSERT_FALSE(in.fail()) << "read " << kPatternFile;
    active = true;  // from here on the destructor restores `saved`
    std::ofstream(kPatternFile) << "|" << root << helper.string() << " %u";

    // Control: a host process that crashes with RLIMIT_CORE 0 starts the
    // helper, or the case could not see a dump of the sandbox either.
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << strerror(errno);
    if (pid == 0) {
      rlimit zero{0, 0};
      setrlimit(RLIMIT_CORE, &zero);
      signal(SIGSEGV, SIG_DFL);
      kill(getpid(), SIGSEGV);
      _exit(1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(wait_for_marker(0, 5000)) << "the pipe core_pattern did not start its helper for a crashing "
                                             "host process (status " << status << ")";
    fs::remove(marker(0));
  }
};

// What the runner prepares on the host for one case; undone in the destructor.
struct HostSetup {
  std::vector<std::pair<std::string, int>> listeners;  // label, listening fd
  std::vector<std::string> env;                        // NAME=VALUE for --env
  pid_t canary = -1;
  std::unique_ptr<PipeCorePattern> core_pattern;

  HostSetup() = default;
  HostSetup(const HostSetup&) = delete;
  HostSetup& operator=(const HostSetup&) = delete;
  ~HostSetup() {
    for (auto& [label, fd] : listeners) close(fd);
    if (canary > 0) {
      kill(canary, SIGKILL);
      waitpid(canary, nullptr, 0);
    }
  }

  void tcp_listener() {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0) << strerror(errno);
    listeners.emplace_back("tcp 127.0.0.1", fd);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << strerror(errno);
    ASSERT_EQ(listen(fd, 16), 0) << strerror(errno);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    env.push_back("HOSTILE_TCP_PORT=" + std::to_string(ntohs(a.sin_port)));

    int fd6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd6 < 0) return;  // no IPv6 on this host: the v6 probe falls back to the v4 port
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_loopback;
    socklen_t len6 = sizeof a6;
    if (bind(fd6, reinterpret_cast<sockaddr*>(&a6), sizeof a6) != 0 || listen(fd6, 16) != 0 ||
        getsockname(fd6, reinterpret_cast<sockaddr*>(&a6), &len6) != 0) {
      close(fd6);
      return;
    }
    listeners.emplace_back("tcp [::1]", fd6);
    env.push_back("HOSTILE_TCP6_PORT=" + std::to_string(ntohs(a6.sin6_port)));
  }

  void abstract_socket() {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0) << strerror(errno);
    listeners.emplace_back("abstract unix", fd);
    std::string name = "airlock-hostile-" + random_hex(8);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path + 1, name.data(), name.size());  // sun_path[0] == 0: abstract
    socklen_t len = offsetof(sockaddr_un, sun_path) + 1 + name.size();
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), len), 0) << strerror(errno);
    ASSERT_EQ(listen(fd, 16), 0) << strerror(errno);
    env.push_back("HOSTILE_ABSTRACT=" + name);
  }

  // A host process of another unprivileged uid that kill(-1) inside the
  // sandbox must not reach.
  void start_canary() {
    canary = fork();
    ASSERT_GE(canary, 0) << strerror(errno);
    if (canary == 0) {
      if (setgroups(0, nullptr) != 0 || setresgid(kCanaryUid, kCanaryUid, kCanaryUid) != 0 ||
          setresuid(kCanaryUid, kCanaryUid, kCanaryUid) != 0)
        _exit(120);
      execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
      _exit(121);
    }
  }

  void pipe_core_pattern() {
    core_pattern = std::make_unique<PipeCorePattern>();
    core_pattern->start();
  }

  // No process of the job's host uid made the host start the dump helper.
  void expect_no_dump(const json& record, const std::string& context) {
    if (!core_pattern) return;
    uid_t uid = record.contains("sandbox") && record["sandbox"].value("host_uid", json()).is_number_unsigned()
                    ? record["sandbox"]["host_uid"].get<uid_t>()
                    : 0;
    ASSERT_NE(uid, 0u) << "record has no sandbox.host_uid\n" << context;
    EXPECT_FALSE(core_pattern->wait_for_marker(uid, 1000))
        << "a sandboxed process made the host run the core_pattern helper (as root)\n" << context;
  }

  // Listeners must have no pending connection: nothing reached the host.
  void expect_untouched(const std::string& context) {
    for (auto& [label, fd] : listeners) {
      int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        close(c);
        ADD_FAILURE() << "the host's " << label << " listener received a connection from the sandbox\n" << context;
      } else {
        EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << label << " accept: " << strerror(errno);
      }
    }
    if (canary > 0) {
      int status = 0;
      pid_t r = waitpid(canary, &status, WNOHANG);
      EXPECT_EQ(r, 0) << "the host canary (uid " << kCanaryUid << ") died: status " << status
                      << " (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")\n"
                      << context;
      if (r != 0) canary = -1;
    }
  }
};

}  // namespace airlock::testing::hostile
