// The cgroup backend detect_cgroup_backend() picks on this machine (v1
// hierarchies plus the cgroup2 "unified" mount), with real processes: OOM
// kill, pids limit, kill-all of a daemonized grandchild, cpu accounting and
// quota, CLONE_INTO_CGROUP, and removal from every hierarchy. Needs root.
//
// Each test uses the parent "airlock-test-<pid>"; the fixture kills its
// children, destroys its groups and removes that parent in every hierarchy
// even when an assertion fails. The test process is a child subreaper while a
// test runs, so daemonized descendants are reaped here, not left as zombies.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup_mounts.h"
#include "sys/file_io.h"
#include "sys/syscalls.h"

namespace airlock::sandbox {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMiB = 1024 * 1024;
constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

std::string slurp(const std::string& path) {
  auto text = sys::read_file(path);
  return text ? *text : "";
}

// A forked child that waits for go() before running its body, and can send
// integers back through report().
class Child {
 public:
  // `body` gets the write end of the report pipe; the child _exits after it.
  explicit Child(const std::function<void(int report_fd)>& body) {
    int go[2], report[2];
    if (::pipe2(go, O_CLOEXEC) < 0 || ::pipe2(report, O_CLOEXEC) < 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(go[1]);
      ::close(report[0]);
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(100);
      body(report[1]);
      ::_exit(0);
    }
    ::close(go[0]);
    ::close(report[1]);
    go_ = UniqueFd(go[1]);
    report_ = UniqueFd(report[0]);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void go() { ASSERT_EQ(::write(go_.get(), "g", 1), 1); }
  // The next integer the child reported, or nullopt after `timeout_ms` or EOF.
  std::optional<long> next(int timeout_ms = 20000) {
    pollfd pfd{.fd = report_.get(), .events = POLLIN, .revents = 0};
    if (::poll(&pfd, 1, timeout_ms) != 1) return std::nullopt;
    long v;
    if (::read(report_.get(), &v, sizeof(v)) != sizeof(v)) return std::nullopt;
    return v;
  }
  // Waits for the child's exit status (once).
  int wait() {
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd go_, report_;
};

void report(int fd, long v) { (void)!::write(fd, &v, sizeof(v)); }

class CgroupV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    parent_ = "airlock-test-" + std::to_string(::getpid());
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    auto backend = detect_cgroup_backend(parent_);
    ASSERT_TRUE(backend) << backend.error().message();
    backend_ = std::move(*backend);
  }

  void TearDown() override {
    groups_.clear();  // each destructor kills and removes its group
    if (backend_) {
      for (const auto& name : backend_->list().value_or(std::vector<std::string>{})) {
        (void)backend_->open(name);  // destroyed at once: kill and remove
      }
    }
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    for (const auto& dir : hierarchy_dirs()) ::rmdir((dir + "/" + parent_).c_str());
  }

  Cgroup& create(const std::string& name, const CgroupLimits& limits) {
    auto group = backend_->create(name, limits);
    EXPECT_TRUE(group) << group.error().message();
    if (!group) throw std::runtime_error("create failed");
    groups_.push_back(std::move(*group));
    return *groups_.back();
  }

  // Every hierarchy mounted under /sys/fs/cgroup (one directory per mount).
  static std::vector<std::string> hierarchy_dirs() {
    std::vector<std::string> dirs;
    for (const auto& m : parse_cgroup_mounts(slurp("/proc/self/mountinfo"))) {
      if (m.mount_point.starts_with(std::string(kCgroupRoot) + "/")) dirs.push_back(m.mount_point);
    }
    return dirs;
  }
  // The v1 controllers a new group is made in on this host (after a first
  // create, which makes the parent): cpuacct and freezer only where the
  // cgroup2 group cannot stand in for them.
  std::vector<std::string> new_group_controllers() const {
    std::string group2 = std::string(kCgroupRoot) + "/unified/" + parent_;
    return v1_controllers_for_new_group(fs::exists(group2 + "/cpu.stat"), fs::exists(group2 + "/cgroup.kill"));
  }
  std::vector<std::string> group_dirs_present(const std::string& name) const {
    std::vector<std::string> present;
    for (const auto& dir : hierarchy_dirs()) {
      std::string g = dir + "/" + parent_ + "/" + name;
      if (fs::exists(g)) present.push_back(g);
    }
    return present;
  }

  std::string parent_;
  std::unique_ptr<CgroupBackend> backend_;
  std::vector<std::unique_ptr<Cgroup>> groups_;
};

TEST_F(CgroupV1Test, DetectsHybridLayoutAndWritesLimitsEverywhere) {
  EXPECT_NE(backend_->describe().find("cgroup v1"), std::string::npos) << backend_->describe();
  EXPECT_NE(backend_->describe().find("cgroup v2 at /sys/fs/cgroup/unified"), std::string::npos);
  Cgroup& g = create("limits", {.memory_bytes = 64 * kMiB, .pids = 16, .cpus = 0.5});
  std::string rel = "/" + parent_ + "/limits/";
  EXPECT_EQ(slurp(kCgroupRoot + std::string("/memory") + rel + "memory.limit_in_bytes"), "67108864\n");
  EXPECT_EQ(slurp(kCgroupRoot + std::string("/memory") + rel + "memory.memsw.limit_in_bytes"),
            "67108864\n");
  EXPECT_EQ(slurp(kCgroupRoot + std::string("/pids") + rel + "pids.max"), "16\n");
  EXPECT_EQ(slurp(kCgroupRoot + std::string("/cpu") + rel + "cpu.cfs_quota_us"), "50000\n");
  EXPECT_EQ(slurp(kCgroupRoot + std::string("/cpu") + rel + "cpu.cfs_period_us"), "100000\n");
  // memory, pids, cpu and unified (cpuacct and freezer only on a kernel
  // without cgroup.kill); nothing else.
  EXPECT_EQ(group_dirs_present("limits").size(), new_group_controllers().size() + 1);
  for (const char* c : {"cpuacct", "freezer"}) {
    bool wanted = std::ranges::count(new_group_controllers(), std::string(c)) > 0;
    EXPECT_EQ(fs::exists(kCgroupRoot + std::string("/") + c + rel), wanted) << c;
  }
  EXPECT_GE(g.clone_into_fd(), 0);
  EXPECT_EQ(backend_->list().value(), std::vector<std::string>{"limits"});
  EXPECT_TRUE(g.empty().value_or(false));
}

TEST_F(CgroupV1Test, OverMemoryLimitIsOomKilledAndReported) {
  Cgroup& g = create("oom", {.memory_bytes = 64 * kMiB, .pids = 16});
  Child child([](int) {
    constexpr size_t kSize = 200 * kMiB;
    auto* p = static_cast<char*>(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) ::_exit(101);
    for (size_t i = 0; i < kSize; i += 4096) p[i] = 1;
    ::_exit(0);  // not reached if the limit holds
  });
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(g.add_process(child.pid()));
  child.go();
  int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  auto u = g.usage();
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_GE(u->oom_kills, 1u);
  EXPECT_GT(u->peak_memory_bytes, 32 * kMiB);
  EXPECT_LE(u->peak_memory_bytes, 64 * kMiB);
  ASSERT_TRUE(g.kill_all());
  EXPECT_TRUE(g.remove());
}

TEST_F(CgroupV1Test, ForkBombHitsPidsLimit) {
  Cgroup& g = create("forkbomb", {.memory_bytes = 256 * kMiB, .pids = 16});
  Child child([](int out) {
    long forked = 0;
    for (;;) {
      pid_t p = ::fork();
      if (p == 0) {
        for (;;) ::pause();
      }
      if (p < 0) break;
      ++forked;
    }
    report(out, errno);
    report(out, forked);
    for (;;) ::pause();
  });
  ASSERT_TRUE(g.add_process(child.pid()));
  child.go();
  EXPECT_EQ(child.next(), EAGAIN);
  EXPECT_EQ(child.next(), 15);  // the child and 15 more make 16
  auto u = g.usage();
  ASSERT_TRUE(u) << u.error().message();
  EXPECT_TRUE(u->pids_limit_hit);
  EXPECT_EQ(u->oom_kills, 0u);
  ASSERT_TRUE(g.kill_all());
  EXPECT_TRUE(g.empty().value_or(false));
  int status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(g.remove());
}

TEST_F(CgroupV1Test, KillAllReachesDaemonThatIgnoresSigterm) {
  Cgroup& g = create("daemon", {.pids = 16});
  Child child([](int out) {
    pid_t mid = ::fork();
    if (mid == 0) {
      ::setsid();
      if (::fork() == 0) {  // the daemon: new session, reparented, deaf to SIGTERM
        ::signal(SIGTERM, SIG_IGN);
        report(out, ::getpid());
        for (;;) ::pause();
      }
      ::_exit(0);
    }
    ::waitpid(mid, nullptr, 0);
    for (;;) ::pause();
  });
  ASSERT_TRUE(g.add_process(child.pid()));
  child.go();
  auto daemon = child.next();
  ASSERT_TRUE(daemon);
  pid_t pid = static_cast<pid_t>(*daemon);
  EXPECT_NE(::getsid(pid), ::getsid(0));  // its own session, not ours
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(::kill(pid, 0), 0) << "the daemon should have ignored SIGTERM";
  EXPECT_FALSE(g.empty().value_or(true));

  ASSERT_TRUE(g.kill_all());
  EXPECT_TRUE(g.empty().value_or(false));
  // Orphaned to us (child subreaper): it died of SIGKILL.
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(g.remove());
}

TEST_F(CgroupV1Test, CpuTimeGrowsAndQuotaHolds) {
  Cgroup& free_group = create("busy", {});
  Cgroup& capped = create("capped", {.cpus = 0.1});
  auto spin = [](int) {
    for (uint64_t i = 0;; ++i) asm volatile("" : : "r"(i));
  };
  Child a(spin), b(spin);
  ASSERT_TRUE(free_group.add_process(a.pid()));
  ASSERT_TRUE(capped.add_process(b.pid()));
  auto start = std::chrono::steady_clock::now();
  a.go();
  b.go();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t first = free_group.cpu_ns().value_or(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  uint64_t second = free_group.cpu_ns().value_or(0);
  uint64_t capped_ns = capped.cpu_ns().value_or(UINT64_MAX);
  auto wall_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - start)
                                           .count());
  EXPECT_GT(first, 0u);
  EXPECT_GT(second, first);
  EXPECT_EQ(free_group.usage().value().cpu_ns >= second, true);
  // 10% of one cpu; allow bursts and accounting slack, still far below 1 cpu.
  EXPECT_LT(capped_ns, wall_ns / 2) << "capped " << capped_ns << " ns in " << wall_ns << " ns";
  ASSERT_TRUE(free_group.kill_all());
  ASSERT_TRUE(capped.kill_all());
}

TEST_F(CgroupV1Test, CloneIntoCgroupThenAddToV1) {
  Cgroup& g = create("cloned", {.pids = 8});
  ASSERT_GE(g.clone_into_fd(), 0);
  int go[2];
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(g.clone_into_fd());
  auto pid = sys::clone3(args);
  ASSERT_TRUE(pid) << pid.error().message();
  if (*pid == 0) {
    ::close(go[1]);
    char c;
    (void)!::read(go[0], &c, 1);
    ::_exit(0);
  }
  ::close(go[0]);
  UniqueFd go_w(go[1]);
  std::string before = slurp("/proc/" + std::to_string(*pid) + "/cgroup");
  EXPECT_NE(before.find("0::/" + parent_ + "/cloned\n"), std::string::npos) << before;
  EXPECT_EQ(before.find("memory:/" + parent_), std::string::npos) << before;
  ASSERT_TRUE(g.add_process(*pid));
  std::string after = slurp("/proc/" + std::to_string(*pid) + "/cgroup");
  for (const auto& c : new_group_controllers()) {
    EXPECT_NE(after.find(c + ":/" + parent_ + "/cloned\n"), std::string::npos) << after;
  }
  EXPECT_NE(after.find("0::/" + parent_ + "/cloned\n"), std::string::npos) << after;
  go_w.reset();
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(g.empty().value_or(false));
}

// The sandbox's way in (launcher.cc): cloned into the cgroup2 group, then
// the child writes "0" into the v1 `tasks` fds it inherited, in a new user
// namespace before its id maps exist (the kernel checks the opener's
// credentials). add_process() afterwards finds it everywhere and moves nothing.
TEST_F(CgroupV1Test, ANewChildJoinsItsV1GroupsItself) {
  Cgroup& g = create("self", {.pids = 8});
  auto join = g.open_self_join();
  ASSERT_TRUE(join) << join.error().message();
  ASSERT_EQ(join->size(), new_group_controllers().size());  // memory, pids, cpu here
  int done[2];
  ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP | CLONE_NEWUSER;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(g.clone_into_fd());
  auto pid = sys::clone3(args);
  ASSERT_TRUE(pid) << pid.error().message();
  if (*pid == 0) {
    ::close(done[0]);
    char ok = 1;
    for (const UniqueFd& fd : *join) ok &= ::write(fd.get(), "0", 1) == 1;
    (void)!::write(done[1], &ok, 1);
    for (;;) ::pause();
  }
  ::close(done[1]);
  join->clear();
  char ok = 0;
  ASSERT_EQ(::read(done[0], &ok, 1), 1);
  ::close(done[0]);
  EXPECT_EQ(ok, 1) << "a write of 0 into tasks failed in the child";
  std::string after = slurp("/proc/" + std::to_string(*pid) + "/cgroup");
  for (const auto& c : new_group_controllers())
    EXPECT_NE(after.find(c + ":/" + parent_ + "/self\n"), std::string::npos) << after;
  auto member = cgroupfs::parse_v1_membership(after);
  EXPECT_EQ(member["memory"], "/" + parent_ + "/self");
  ASSERT_TRUE(g.add_process(*pid));  // checks; nothing left to move
  ASSERT_TRUE(g.kill_all());
  int status = 0;
  ASSERT_EQ(::waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(g.empty().value_or(false));
}

TEST_F(CgroupV1Test, RemoveLeavesNoDirectoryInAnyHierarchy) {
  Cgroup& g = create("gone", {.memory_bytes = 64 * kMiB, .pids = 16, .cpus = 1});
  Child child([](int) {
    for (;;) ::pause();
  });
  ASSERT_TRUE(g.add_process(child.pid()));
  child.go();
  const size_t dirs = new_group_controllers().size() + 1;  // and unified
  EXPECT_EQ(group_dirs_present("gone").size(), dirs);
  auto busy = g.remove();  // tasks remain: refused, nothing removed
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().err, EBUSY);
  EXPECT_EQ(group_dirs_present("gone").size(), dirs);
  ASSERT_TRUE(g.kill_all());
  ASSERT_TRUE(g.remove()) << "remove failed";
  EXPECT_EQ(group_dirs_present("gone"), std::vector<std::string>{});
  EXPECT_EQ(backend_->list().value(), std::vector<std::string>{});

}

TEST_F(CgroupV1Test, SweepOpensAGroupLeftBehindAndKillsItsTasks) {
  // What a crashed airlock leaves: the directories, and a task that reached
  // the v1 hierarchies but not the unified one (so cgroup.kill misses it and
  // kill_all must fall back to freeze / SIGKILL / thaw).
  for (const char* c : {"memory", "pids", "cpu", "cpuacct", "freezer", "unified"}) {
    std::string dir = kCgroupRoot + std::string("/") + c + "/" + parent_;
    ::mkdir(dir.c_str(), 0755);
    ASSERT_EQ(::mkdir((dir + "/stale").c_str(), 0755), 0) << c;
  }
  Child child([](int) {
    for (;;) ::pause();
  });
  for (const char* c : {"memory", "pids", "freezer"}) {
    std::string procs = kCgroupRoot + std::string("/") + c + "/" + parent_ + "/stale/cgroup.procs";
    ASSERT_TRUE(sys::write_file(procs, std::to_string(child.pid())));
  }
  child.go();
  EXPECT_EQ(backend_->list().value(), std::vector<std::string>{"stale"});
  auto stale = backend_->open("stale");
  ASSERT_TRUE(stale) << stale.error().message();
  EXPECT_FALSE((*stale)->empty().value_or(true));
  ASSERT_TRUE((*stale)->kill_all());
  int status = child.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE((*stale)->remove());
  EXPECT_EQ(group_dirs_present("stale"), std::vector<std::string>{});
  EXPECT_EQ(backend_->open("nope").error().err, ENOENT);
}

// Without a cgroup2 mount (a host with v1 only), a new group is made in
// cpuacct for its cpu time and in freezer for killing: a child that forks
// without end is stopped by freeze / SIGKILL / thaw, and the cpu time comes
// from cpuacct.
TEST_F(CgroupV1Test, WithoutCgroup2AGroupKeepsCpuacctAndFreezer) {
  auto v1_only = make_cgroup_v1_backend(kCgroupRoot, "", parse_cgroup_mounts(slurp("/proc/self/mountinfo")),
                                        parent_);
  auto made = v1_only->create("v1only", {.memory_bytes = 64 * kMiB, .pids = 64, .cpus = 1});
  ASSERT_TRUE(made) << made.error().message();
  std::unique_ptr<Cgroup> g = std::move(*made);
  std::string rel = "/" + parent_ + "/v1only";
  for (const char* c : {"memory", "pids", "cpu", "cpuacct", "freezer"})
    EXPECT_TRUE(fs::exists(kCgroupRoot + std::string("/") + c + rel)) << c;
  EXPECT_FALSE(fs::exists(kCgroupRoot + std::string("/unified") + rel));
  EXPECT_LT(g->clone_into_fd(), 0);
  Child forker([](int) {
    for (;;) {  // children that fork in turn, so a kill by pid list alone races them
      if (::fork() == 0) continue;
      for (uint64_t i = 0; i < 1000000; ++i) asm volatile("" : : "r"(i));
    }
  });
  ASSERT_TRUE(g->add_process(forker.pid()));
  forker.go();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(g->empty().value_or(true));
  auto cpu = g->cpu_ns();
  ASSERT_TRUE(cpu) << cpu.error().message();
  EXPECT_GT(*cpu, 0u);
  ASSERT_TRUE(g->kill_all());
  EXPECT_TRUE(g->empty().value_or(false));
  int status = forker.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ASSERT_TRUE(g->remove());
  EXPECT_EQ(group_dirs_present("v1only"), std::vector<std::string>{});
}

}  // namespace
}  // namespace airlock::sandbox
