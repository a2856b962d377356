// Hybrid cgroup backend: v1 hierarchies for limits and accounting
// (<mount>/<parent>/<name> for memory, pids, cpu, and cpuacct and freezer
// only where the cgroup2 group cannot stand in for them:
// v1_controllers_for_new_group(); mount points read from
// /proc/self/mountinfo, so "cpu,cpuacct" co-mounts are one hierarchy) plus,
// when mounted, a cgroup2 group <unified>/<parent>/<name> for
// CLONE_INTO_CGROUP, cgroup.kill, cgroup.events and cpu.stat.
//
// v1 rules kept here: release_agent and notify_on_release are never written
// (CVE-2022-0492); memory.limit_in_bytes is set before memory.memsw (memsw
// must stay >= limit); memory.kmem.tcp gets the memory limit too, or socket
// buffers escape it; rmdir answers EBUSY while tasks are still leaving, so
// removal retries; an OOM-killed group is only empty once its dying tasks
// have exited, which kill_all waits for.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/cgroup_files.h"
#include "sandbox/cgroup_mounts.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

using cgroupfs::Clock;
using cgroupfs::join;

const std::vector<std::string> kV1Controllers = {"memory", "pids", "cpu", "cpuacct", "freezer"};
const std::vector<std::string> kRequiredControllers = {"memory", "pids", "cpu"};

// Mount point of each v1 controller's hierarchy ("" when not mounted).
struct V1Mounts {
  std::map<std::string, std::string> by_controller;

  std::string get(const std::string& controller) const {
    auto it = by_controller.find(controller);
    return it == by_controller.end() ? "" : it->second;
  }
  // Distinct mount points of `controllers`, in their order.
  std::vector<std::string> hierarchies(const std::vector<std::string>& controllers) const {
    std::vector<std::string> out;
    for (const auto& c : controllers) {
      std::string m = get(c);
      if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    }
    return out;
  }
};

V1Mounts find_v1_mounts(const std::string& v1_root, const std::vector<CgroupMount>& cgroup_mounts) {
  V1Mounts mounts;
  mounts.by_controller = v1_controller_mounts(cgroup_mounts, v1_root, kV1Controllers);
  // Not in mountinfo (e.g. a test tree): the conventional <v1_root>/<controller>.
  for (const auto& c : kV1Controllers) {
    std::string conventional = join(v1_root, c);
    if (!mounts.by_controller.contains(c) && cgroupfs::exists(conventional)) {
      mounts.by_controller[c] = conventional;
    }
  }
  return mounts;
}

class CgroupV1;
Status apply_limits(const CgroupV1& group, const CgroupLimits& limits);

class CgroupV1 final : public Cgroup {
 public:
  // `relative` is <parent>/<name>, the group's path in every hierarchy.
  CgroupV1(std::string name, V1Mounts mounts, std::string relative)
      : name_(std::move(name)), mounts_(std::move(mounts)), relative_(std::move(relative)) {}
  ~CgroupV1() override {
    if (removed_) return;
    (void)kill_all();
    (void)remove();
  }
  void release() override { removed_ = true; }
  Status set_limits(const CgroupLimits& limits) override { return apply_limits(*this, limits); }

  // Records a directory that exists (created or found) so remove() takes it away.
  void own_v1(const std::string& dir) { v1_dirs_.push_back(dir); }
  Status own_unified(const std::string& dir) {
    unified_dir_ = dir;
    unified_fd_ = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!unified_fd_) return fail_errno("open " + dir);
    return {};
  }
  // A controller of the hierarchy `dir` is in ("" if none is known).
  std::string controller_of(const std::string& dir) const {
    for (const auto& c : kV1Controllers) {
      if (dir_of(c) == dir) return c;
    }
    return "";
  }
  bool owns_anything() const { return !v1_dirs_.empty() || !unified_dir_.empty(); }
  std::string dir_of(const std::string& controller) const {
    std::string m = mounts_.get(controller);
    if (m.empty()) return "";
    std::string dir = join(m, relative_);
    return std::find(v1_dirs_.begin(), v1_dirs_.end(), dir) == v1_dirs_.end() ? "" : dir;
  }

  const std::string& name() const override { return name_; }
  int clone_into_fd() const override { return unified_fd_.get(); }

  // Writing a pid into a group it is already in is a no-op, so a process
  // started with CLONE_INTO_CGROUP may be added again. Call this while the
  // process cannot fork (e.g. before it execs): a fork between two writes
  // leaves the new child behind in the hierarchies not yet written.
  Status add_process(pid_t pid) override {
    emptied_ = false;
    std::string p = std::to_string(pid);
    if (!unified_dir_.empty() && !cgroupfs::in_cgroup2(pid, relative_)) {
      if (auto st = sys::write_file(join(unified_dir_, "cgroup.procs"), p); !st) return st;
    }
    // Skip the hierarchies it already is in (it joined them itself: each
    // write here costs a grace period without favordynmods).
    auto text = sys::read_file("/proc/" + p + "/cgroup", 1 << 16);
    auto member = cgroupfs::parse_v1_membership(text ? *text : "");
    for (const auto& dir : v1_dirs_) {
      std::string c = controller_of(dir);
      auto it = member.find(c);
      if (!c.empty() && it != member.end() && it->second == "/" + relative_) continue;
      if (auto st = sys::write_file(join(dir, "cgroup.procs"), p); !st) return st;
    }
    return {};
  }

  Result<std::vector<UniqueFd>> open_self_join() const override {
    std::vector<UniqueFd> fds;
    for (const auto& dir : v1_dirs_) {
      std::string tasks = join(dir, "tasks");
      UniqueFd fd(::open(tasks.c_str(), O_WRONLY | O_CLOEXEC));
      if (!fd) return fail_errno("open " + tasks);
      fds.push_back(std::move(fd));
    }
    return fds;
  }

  Result<uint64_t> cpu_ns() const override {
    if (std::string d = dir_of("cpuacct"); !d.empty()) return cgroupfs::read_u64(join(d, "cpuacct.usage"));
    if (unified_dir_.empty()) return fail("cgroup " + name_ + ": no cpu accounting");
    return cgroupfs::read_cpu_stat_ns(unified_dir_);
  }

  Result<CgroupUsage> usage() const override {
    CgroupUsage u;
    auto cpu = cpu_ns();
    if (!cpu) return std::unexpected(cpu.error());
    u.cpu_ns = *cpu;
    if (std::string d = dir_of("memory"); !d.empty()) {
      auto peak = cgroupfs::read_u64(join(d, "memory.max_usage_in_bytes"));
      if (!peak) return std::unexpected(peak.error());
      u.peak_memory_bytes = *peak;
      // "oom_kill" appeared in Linux 4.13; older kernels show only under_oom.
      auto oom = cgroupfs::read_keyed(join(d, "memory.oom_control"), "oom_kill");
      u.oom_kills = oom.value_or(0);
      auto sockets = socket_limit_hit(d);
      if (!sockets) return std::unexpected(sockets.error());
      u.socket_memory_limit_hit = *sockets;
    }
    if (std::string d = dir_of("pids"); !d.empty()) {
      auto hits = cgroupfs::zero_if_missing(cgroupfs::read_keyed(join(d, "pids.events"), "max"));
      if (!hits) return std::unexpected(hits.error());
      u.pids_limit_hit = *hits > 0;
    }
    return u;
  }

  Result<bool> empty() const override {
    if (!unified_dir_.empty()) {
      auto p = cgroupfs::populated(join(unified_dir_, "cgroup.events"));
      if (!p) return std::unexpected(p.error());
      if (*p) return false;
    }
    auto pids = all_pids();
    if (!pids) return std::unexpected(pids.error());
    return pids->empty();
  }

  Status kill_all(int timeout_ms = 5000) override {
    if (emptied_) return {};
    auto st = kill_and_wait(Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0)));
    emptied_ = st.has_value();
    return st;
  }

  // Refuses (EBUSY) while any hierarchy has tasks; else rmdir in each.
  Status remove() override {
    if (!emptied_)
      if (auto e = empty(); e && !*e) return fail_with("cgroup " + name_ + " still has tasks", EBUSY);
    Status result;
    unified_fd_.reset();
    if (!unified_dir_.empty()) {
      if (auto st = cgroupfs::remove_dir(unified_dir_); st) {
        unified_dir_.clear();
      } else {
        result = st;
      }
    }
    std::vector<std::string> left;
    for (const auto& dir : v1_dirs_) {
      if (auto st = cgroupfs::remove_dir(dir); !st) {
        if (result) result = st;
        left.push_back(dir);
      }
    }
    v1_dirs_ = std::move(left);
    removed_ = !owns_anything();
    return result;
  }

 private:
  Status kill_and_wait(Clock::time_point deadline) {
    // cgroup.kill only while the cgroup2 group has processes: a write takes
    // the kernel's cgroup_mutex, which every cgroup made or removed waits for.
    std::string events = join(unified_dir_, "cgroup.events");
    if (!unified_dir_.empty() && cgroupfs::populated(events).value_or(true) &&
        cgroupfs::exists(join(unified_dir_, "cgroup.kill"))) {
      if (auto st = sys::write_file(join(unified_dir_, "cgroup.kill"), "1"); !st) return st;
      if (auto st = cgroupfs::wait_unpopulated(events, deadline); !st) return st;
    }
    // Without cgroup.kill, or for tasks that reached a v1 group only:
    // freeze, SIGKILL every task, thaw, until every hierarchy is empty.
    for (int delay = 1;; delay = std::min(delay * 2, 20)) {
      auto pids = all_pids();
      if (!pids) return std::unexpected(pids.error());
      if (pids->empty()) return {};
      if (Clock::now() >= deadline) return fail_with("cgroup " + name_ + " still has tasks", ETIMEDOUT);
      if (auto st = freeze_kill_thaw(deadline); !st) return st;
      cgroupfs::sleep_ms(delay);
    }
  }

  // This kernel keeps no failcnt for memory.kmem.tcp (only memory.limit
  // tracks one since 6.x), so a peak at the limit is the sign; older kernels
  // count failures, which also says it.
  static Result<bool> socket_limit_hit(const std::string& dir) {
    auto limit = cgroupfs::read_u64(join(dir, "memory.kmem.tcp.limit_in_bytes"));
    if (!limit) return std::unexpected(limit.error());
    auto peak = cgroupfs::read_u64(join(dir, "memory.kmem.tcp.max_usage_in_bytes"));
    if (!peak) return std::unexpected(peak.error());
    auto failures = cgroupfs::read_u64(join(dir, "memory.kmem.tcp.failcnt"));
    if (!failures) return std::unexpected(failures.error());
    return *failures > 0 || *peak >= *limit;
  }

  Result<std::vector<pid_t>> all_pids() const {
    std::vector<pid_t> all;
    for (const auto& dir : v1_dirs_) {
      auto pids = cgroupfs::read_pids_recursive(dir);
      if (!pids) return std::unexpected(pids.error());
      all.insert(all.end(), pids->begin(), pids->end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

  // A frozen task cannot fork; a SIGKILLed frozen task dies once thawed.
  Status freeze_kill_thaw(Clock::time_point deadline) {
    std::string freezer = dir_of("freezer");
    std::string state = freezer.empty() ? "" : join(freezer, "freezer.state");
    if (!state.empty()) {
      if (auto st = sys::write_file(state, "FROZEN"); !st) return st;
      // FREEZING until every task stopped; kill anyway after a short while.
      auto until = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
      while (Clock::now() < until && sys::read_file(state).value_or("").starts_with("FREEZING")) {
        cgroupfs::sleep_ms(1);
      }
    }
    auto pids = all_pids();
    for (pid_t pid : pids.value_or(std::vector<pid_t>{})) ::kill(pid, SIGKILL);
    if (!state.empty()) {
      if (auto st = sys::write_file(state, "THAWED"); !st) return st;
    }
    if (!pids) return std::unexpected(pids.error());
    return {};
  }

  std::string name_;
  V1Mounts mounts_;
  std::string relative_;              // <parent>/<name>
  std::vector<std::string> v1_dirs_;  // group directories owned, one per hierarchy
  std::string unified_dir_;           // "" if none
  UniqueFd unified_fd_;
  bool removed_ = false;
  bool emptied_ = false;  // kill_all() found it empty (cgroup.h)
};

Status apply_limits(const CgroupV1& group, const CgroupLimits& limits) {
  if (limits.memory_bytes > 0) {
    std::string d = group.dir_of("memory");
    std::string bytes = std::to_string(limits.memory_bytes);
    std::string memsw = join(d, "memory.memsw.limit_in_bytes");
    auto raised = sys::write_file(join(d, "memory.limit_in_bytes"), bytes);
    if (!raised && raised.error().err == EINVAL) {
      // Raising an existing limit: memory+swap must grow first.
      if (auto st = sys::write_file(memsw, bytes); !st) return st;
      raised = sys::write_file(join(d, "memory.limit_in_bytes"), bytes);
    }
    if (!raised) return raised;
    // memory+swap: absent without swap accounting; then keep the group off swap.
    auto st = sys::write_file(memsw, bytes);
    if (!st && st.error().err == ENOENT) st = sys::write_file(join(d, "memory.swappiness"), "0");
    if (!st) return st;
    // v1 charges socket buffers (TCP and UDP alike) only to a group with a
    // TCP limit; without one they are outside every limit (docs/kernel-notes.md).
    if (auto st = sys::write_file(join(d, "memory.kmem.tcp.limit_in_bytes"), bytes); !st) return st;
  }
  if (limits.pids > 0) {
    if (auto st = sys::write_file(join(group.dir_of("pids"), "pids.max"), std::to_string(limits.pids)); !st) {
      return st;
    }
  }
  if (limits.cpus > 0) {
    std::string d = group.dir_of("cpu");
    if (auto st = sys::write_file(join(d, "cpu.cfs_period_us"), std::to_string(cgroupfs::kCpuPeriodUs)); !st)
      return st;
    if (auto st = sys::write_file(join(d, "cpu.cfs_quota_us"), std::to_string(cgroupfs::cpu_quota_us(limits.cpus)));
        !st)
      return st;
  }
  return {};
}

class CgroupV1Backend final : public CgroupBackend {
 public:
  CgroupV1Backend(std::string v1_root, std::string unified, const std::vector<CgroupMount>& mounts,
                  std::string parent)
      : v1_root_(std::move(v1_root)), unified_(std::move(unified)), parent_(std::move(parent)),
        mounts_(find_v1_mounts(v1_root_, mounts)) {}

  std::string describe() const override {
    std::string out = "cgroup v1 (";
    for (const auto& c : kV1Controllers) {
      if (std::string m = mounts_.get(c); !m.empty()) out += (out.back() == '(' ? "" : ", ") + c + " at " + m;
    }
    out += ")";
    if (!unified_.empty()) out += " + cgroup v2 at " + unified_;
    return out;
  }

  Result<std::unique_ptr<Cgroup>> create(const std::string& name, const CgroupLimits& limits) override {
    if (auto st = cgroupfs::check_group_name(name); !st) return std::unexpected(st.error());
    for (const auto& c : kRequiredControllers) {
      if (mounts_.get(c).empty()) return fail("cgroup v1: no " + c + " hierarchy under " + v1_root_);
    }
    // The group owns each directory as soon as it exists: a failure below
    // destroys `group`, which removes them again.
    auto group = std::make_unique<CgroupV1>(name, mounts_, relative(name));
    bool counts_cpu = false, kills = false;  // the cgroup2 group has cpu.stat, cgroup.kill
    if (!unified_.empty()) {
      if (auto st = make_group_dir(unified_, name); !st) return std::unexpected(st.error());
      std::string dir = join(unified_, relative(name));
      if (auto st = group->own_unified(dir); !st) return std::unexpected(st.error());
      counts_cpu = cgroupfs::exists(join(dir, "cpu.stat"));
      kills = cgroupfs::exists(join(dir, "cgroup.kill"));
    }
    auto controllers = v1_controllers_for_new_group(counts_cpu, kills);
    for (const auto& mount : mounts_.hierarchies(controllers)) {
      if (auto st = make_group_dir(mount, name); !st) return std::unexpected(st.error());
      group->own_v1(join(mount, relative(name)));
    }
    if (auto st = apply_limits(*group, limits); !st) return std::unexpected(st.error());
    return group;
  }

  Result<std::unique_ptr<Cgroup>> open(const std::string& name) override {
    if (auto st = cgroupfs::check_group_name(name); !st) return std::unexpected(st.error());
    auto group = std::make_unique<CgroupV1>(name, mounts_, relative(name));
    // Every hierarchy: a group made by an older build has cpuacct and freezer too.
    for (const auto& mount : mounts_.hierarchies(kV1Controllers)) {
      std::string dir = join(mount, relative(name));
      if (cgroupfs::exists(dir)) group->own_v1(dir);
    }
    std::string unified_dir = unified_.empty() ? "" : join(unified_, relative(name));
    if (!unified_dir.empty() && cgroupfs::exists(unified_dir)) {
      if (auto st = group->own_unified(unified_dir); !st) return std::unexpected(st.error());
    }
    if (!group->owns_anything()) return fail_with("cgroup " + name + " not found", ENOENT);
    return std::unique_ptr<Cgroup>(std::move(group));
  }

  Result<std::vector<std::string>> list() const override {
    std::vector<std::string> all;
    auto mounts = mounts_.hierarchies(kV1Controllers);
    if (!unified_.empty()) mounts.push_back(unified_);
    for (const auto& mount : mounts) {
      auto names = cgroupfs::list_dirs(join(mount, parent_));
      if (!names) return std::unexpected(names.error());
      all.insert(all.end(), names->begin(), names->end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

 private:
  std::string relative(const std::string& name) const { return join(parent_, name); }

  // The parent only when it is missing (the first group, or after a sweep
  // removed it): one mkdir per hierarchy and sandbox, not two.
  Status make_group_dir(const std::string& mount, const std::string& name) const {
    std::string dir = join(mount, relative(name));
    auto made = cgroupfs::make_dir(dir, /*exist_ok=*/false);
    if (!made && made.error().err == ENOENT) {
      if (auto parent = cgroupfs::make_dir(join(mount, parent_), /*exist_ok=*/true); !parent) {
        return std::unexpected(parent.error());
      }
      made = cgroupfs::make_dir(dir, /*exist_ok=*/false);
    }
    if (!made) return std::unexpected(made.error());
    return {};
  }

  std::string v1_root_;
  std::string unified_;
  std::string parent_;
  V1Mounts mounts_;
};

}  // namespace

std::unique_ptr<CgroupBackend> make_cgroup_v1_backend(std::string v1_root, std::string unified,
                                                      const std::vector<CgroupMount>& mounts,
                                                      std::string parent) {
  return std::make_unique<CgroupV1Backend>(std::move(v1_root), std::move(unified), mounts, std::move(parent));
}

}  // namespace airlock::sandbox
