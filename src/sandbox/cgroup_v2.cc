// cgroup v2 backend: one job group at <root>/<parent>/<name> with memory.max,
// memory.swap.max, pids.max and cpu.max; kill-all through cgroup.kill (or
// freeze / SIGKILL / thaw); "is it empty" from cgroup.events.
//
// Works on a fake tree of regular files too (tests): it only opens files that
// exist and writes or reads them, and remove() is a plain rmdir (a fake
// group's files must be deleted by the test first; see cgroup_files.h).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

#include "base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/cgroup_files.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

using cgroupfs::Clock;
using cgroupfs::join;

const std::vector<std::string> kControllers = {"memory", "pids", "cpu"};

Clock::time_point deadline_after(int timeout_ms) {
  return Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
}

// Adds the controllers missing from `dir`/cgroup.subtree_control, in one write.
Status enable_controllers(const std::string& dir) {
  std::string path = join(dir, "cgroup.subtree_control");
  auto text = sys::read_file(path);
  if (!text) return std::unexpected(text.error());
  auto enabled = cgroupfs::parse_words(*text);
  std::string request;
  for (const auto& c : kControllers) {
    if (std::find(enabled.begin(), enabled.end(), c) != enabled.end()) continue;
    if (!request.empty()) request += ' ';
    request += "+" + c;
  }
  if (request.empty()) return {};
  return sys::write_file(path, request);
}

Status apply_limits(const std::string& dir, const CgroupLimits& limits);

class CgroupV2 final : public Cgroup {
 public:
  // `relative` is the group's path below the cgroup2 root (<parent>/<name>).
  CgroupV2(std::string name, std::string path, std::string relative, UniqueFd dir)
      : name_(std::move(name)), path_(std::move(path)), relative_(std::move(relative)), dir_(std::move(dir)) {}
  ~CgroupV2() override {
    if (removed_) return;
    (void)kill_all();
    (void)remove();
  }
  void release() override { removed_ = true; }
  Status set_limits(const CgroupLimits& limits) override { return apply_limits(path_, limits); }

  const std::string& name() const override { return name_; }
  int clone_into_fd() const override { return dir_.get(); }

  Status add_process(pid_t pid) override {
    emptied_ = false;
    if (cgroupfs::in_cgroup2(pid, relative_)) return {};  // CLONE_INTO_CGROUP put it here
    return sys::write_file(file("cgroup.procs"), std::to_string(pid));
  }

  // CLONE_INTO_CGROUP places a new sandbox in its group: nothing to join.
  Result<std::vector<UniqueFd>> open_self_join() const override { return std::vector<UniqueFd>{}; }

  Result<uint64_t> cpu_ns() const override { return cgroupfs::read_cpu_stat_ns(path_); }

  Result<CgroupUsage> usage() const override {
    CgroupUsage u;
    auto cpu = cpu_ns();
    if (!cpu) return std::unexpected(cpu.error());
    u.cpu_ns = *cpu;
    // memory.peak exists since Linux 5.19; before it, the highest value seen.
    auto peak = cgroupfs::read_u64(file("memory.peak"));
    if (!peak && peak.error().err == ENOENT) peak = cgroupfs::zero_if_missing(cgroupfs::read_u64(file("memory.current")));
    if (!peak) return std::unexpected(peak.error());
    peak_seen_ = std::max(peak_seen_, *peak);
    u.peak_memory_bytes = peak_seen_;
    auto oom = cgroupfs::zero_if_missing(cgroupfs::read_keyed(file("memory.events"), "oom_kill"));
    if (!oom) return std::unexpected(oom.error());
    u.oom_kills = *oom;
    auto pids_max = cgroupfs::zero_if_missing(cgroupfs::read_keyed(file("pids.events"), "max"));
    if (!pids_max) return std::unexpected(pids_max.error());
    u.pids_limit_hit = *pids_max > 0;
    return u;
  }

  Result<bool> empty() const override {
    auto p = cgroupfs::populated(file("cgroup.events"));
    if (!p) return std::unexpected(p.error());
    return !*p;
  }

  Status kill_all(int timeout_ms = 5000) override {
    if (emptied_) return {};
    auto st = kill_and_wait(deadline_after(timeout_ms));
    emptied_ = st.has_value();
    return st;
  }

  // Refuses (EBUSY) while the group has tasks; on a fake tree without
  // cgroup.events it just tries the rmdir.
  Status remove() override {
    if (!emptied_)
      if (auto e = empty(); e && !*e) return fail_with("cgroup " + name_ + " still has tasks", EBUSY);
    if (auto st = cgroupfs::remove_dir(path_); !st) return st;
    dir_.reset();
    removed_ = true;
    return {};
  }

 private:
  std::string file(std::string_view f) const { return join(path_, f); }

  Status kill_and_wait(Clock::time_point deadline) {
    // Usually the job's processes are gone already: then nothing is written
    // (a write to cgroup.kill takes the kernel's cgroup_mutex, which every
    // cgroup made or removed on the machine waits for). Nothing can enter an
    // empty group but through us (add_process, CLONE_INTO_CGROUP).
    if (auto p = cgroupfs::populated(file("cgroup.events")); p && !*p) return {};
    if (cgroupfs::exists(file("cgroup.kill"))) {
      if (auto st = sys::write_file(file("cgroup.kill"), "1"); !st) return st;
      return cgroupfs::wait_unpopulated(file("cgroup.events"), deadline);
    }
    // Before Linux 5.14: freeze so nothing forks, SIGKILL each process, thaw
    // so they can die; again until empty.
    for (;;) {
      if (auto st = freeze_kill_thaw(); !st) return st;
      auto short_wait = std::min(deadline, Clock::now() + std::chrono::milliseconds(50));
      auto st = cgroupfs::wait_unpopulated(file("cgroup.events"), short_wait);
      if (st || st.error().err != ETIMEDOUT || Clock::now() >= deadline) return st;
    }
  }

  Status freeze_kill_thaw() {
    if (auto st = sys::write_file(file("cgroup.freeze"), "1"); !st) return st;
    auto pids = cgroupfs::read_pids_recursive(path_);
    for (pid_t pid : pids.value_or(std::vector<pid_t>{})) ::kill(pid, SIGKILL);
    if (auto st = sys::write_file(file("cgroup.freeze"), "0"); !st) return st;
    if (!pids) return std::unexpected(pids.error());
    return {};
  }

  std::string name_;
  std::string path_;
  std::string relative_;
  UniqueFd dir_;
  bool removed_ = false;
  bool emptied_ = false;  // kill_all() found it empty (cgroup.h)
  mutable uint64_t peak_seen_ = 0;  // memory.current high-water mark without memory.peak
};

Status apply_limits(const std::string& dir, const CgroupLimits& limits) {
  if (limits.memory_bytes > 0) {
    if (auto st = sys::write_file(join(dir, "memory.max"), std::to_string(limits.memory_bytes)); !st) {
      return st;
    }
    // Absent when swap accounting is off; then there is no swap to limit.
    auto st = sys::write_file(join(dir, "memory.swap.max"), "0");
    if (!st && st.error().err != ENOENT) return st;
  }
  if (limits.pids > 0) {
    if (auto st = sys::write_file(join(dir, "pids.max"), std::to_string(limits.pids)); !st) return st;
  }
  if (limits.cpus > 0) {
    std::string value =
        std::to_string(cgroupfs::cpu_quota_us(limits.cpus)) + " " + std::to_string(cgroupfs::kCpuPeriodUs);
    if (auto st = sys::write_file(join(dir, "cpu.max"), value); !st) return st;
  }
  return {};
}

class CgroupV2Backend final : public CgroupBackend {
 public:
  CgroupV2Backend(std::string root, std::string parent, CgroupMkdirHook on_mkdir)
      : root_(std::move(root)), parent_(std::move(parent)), on_mkdir_(std::move(on_mkdir)) {}

  std::string describe() const override { return "cgroup v2 at " + root_; }

  Result<std::unique_ptr<Cgroup>> create(const std::string& name, const CgroupLimits& limits) override {
    if (auto st = cgroupfs::check_group_name(name); !st) return std::unexpected(st.error());
    // The parent is made ready once per backend (a service or a pool makes a
    // group for every sandbox), and again when it was removed since.
    if (!parent_ready_) {
      if (auto st = prepare_parent(); !st) return std::unexpected(st.error());
      parent_ready_ = true;
    }
    std::string path = join(parent_dir(), name);
    auto made = cgroupfs::make_dir(path, /*exist_ok=*/false);
    if (!made && made.error().err == ENOENT) {
      if (auto st = prepare_parent(); !st) return std::unexpected(st.error());
      made = cgroupfs::make_dir(path, /*exist_ok=*/false);
    }
    if (!made) return std::unexpected(made.error());
    if (on_mkdir_) on_mkdir_(path);
    // From here on the group is owned: a failure below removes it.
    auto group = open_dir(name, path);
    if (!group) {
      (void)cgroupfs::remove_dir(path);
      return group;
    }
    if (auto st = apply_limits(path, limits); !st) return std::unexpected(st.error());
    return group;
  }

  Result<std::unique_ptr<Cgroup>> open(const std::string& name) override {
    if (auto st = cgroupfs::check_group_name(name); !st) return std::unexpected(st.error());
    return open_dir(name, join(parent_dir(), name));
  }

  Result<std::vector<std::string>> list() const override { return cgroupfs::list_dirs(parent_dir()); }

 private:
  std::string parent_dir() const { return join(root_, parent_); }

  // The parent exists and passes memory, pids and cpu down to its children.
  Status prepare_parent() {
    if (auto st = enable_controllers(root_); !st) return st;
    auto made = cgroupfs::make_dir(parent_dir(), /*exist_ok=*/true);
    if (!made) return std::unexpected(made.error());
    if (*made && on_mkdir_) on_mkdir_(parent_dir());
    return enable_controllers(parent_dir());
  }

  Result<std::unique_ptr<Cgroup>> open_dir(const std::string& name, const std::string& path) const {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return fail_errno("open " + path);
    return std::make_unique<CgroupV2>(name, path, join(parent_, name), std::move(fd));
  }

  std::string root_;
  std::string parent_;
  CgroupMkdirHook on_mkdir_;
  std::atomic<bool> parent_ready_ = false;  // refill threads create groups at once
};

}  // namespace

std::unique_ptr<CgroupBackend> make_cgroup_v2_backend(std::string root, std::string parent,
                                                      CgroupMkdirHook on_mkdir) {
  return std::make_unique<CgroupV2Backend>(std::move(root), std::move(parent), std::move(on_mkdir));
}

}  // namespace airlock::sandbox
