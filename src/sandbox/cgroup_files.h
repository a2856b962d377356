// Shared helpers of the cgroup backends: reading and writing cgroupfs
// interface files, waiting for a group to empty, creating and removing group
// directories. Internal to src/sandbox/cgroup_*.cc; the parse_* functions are
// pure and unit tested.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::sandbox::cgroupfs {

using Clock = std::chrono::steady_clock;

// The value of `key` in a flat-keyed file ("key value" per line).
std::optional<uint64_t> parse_keyed(std::string_view text, std::string_view key);
// Whitespace-separated words of `text`, each without a leading '+'
// (cgroup.controllers, cgroup.subtree_control).
std::vector<std::string> parse_words(std::string_view text);
// One pid per line (cgroup.procs); lines that are not numbers are skipped.
std::vector<pid_t> parse_pids(std::string_view text);
// /proc/PID/cgroup's v1 lines ("4:memory:/airlock/x", "3:cpu,cpuacct:/"):
// each controller named there, with its group's path. The cgroup2 line
// ("0::/...") has no controllers and is left out.
std::map<std::string, std::string> parse_v1_membership(std::string_view text);
// Group names become one path component: no '/', no "." or "..", no empty name.
Status check_group_name(std::string_view name);
// CPU bandwidth: `cpus` cores as a quota of CPU time per period (both in µs),
// the quota at least the kernel's lower bound (1 ms). v1 writes the two to
// cpu.cfs_quota_us and cpu.cfs_period_us, v2 both to cpu.max.
inline constexpr uint64_t kCpuPeriodUs = 100000;
uint64_t cpu_quota_us(double cpus);

std::string join(std::string_view dir, std::string_view file);
bool exists(const std::string& path);

// A number file ("67108864\n", or "max" as UINT64_MAX).
Result<uint64_t> read_u64(const std::string& path);
// `key` of a flat-keyed file. A missing file fails with err ENOENT; a missing
// key fails with err 0.
Result<uint64_t> read_keyed(const std::string& path, std::string_view key);
// cgroup2 cpu.stat's usage_usec of the group directory `dir`, in nanoseconds.
Result<uint64_t> read_cpu_stat_ns(const std::string& dir);
// 0 for a missing file (a controller or feature absent on this kernel).
Result<uint64_t> zero_if_missing(Result<uint64_t> value);

// Pids listed in cgroup.procs of `dir` and of every group below it.
Result<std::vector<pid_t>> read_pids_recursive(const std::string& dir);
// "populated" of a cgroup2 cgroup.events file.
Result<bool> populated(const std::string& events_path);
// Waits until cgroup.events says "populated 0", woken by the kernel's
// POLLPRI on the file (and at most every 20 ms as a fallback; a fake tree's
// regular file never signals). ETIMEDOUT after `deadline`.
Status wait_unpopulated(const std::string& events_path, Clock::time_point deadline);

// mkdir 0755. With `exist_ok`, an existing directory is fine; otherwise EEXIST.
// Returns whether it was created.
Result<bool> make_dir(const std::string& path, bool exist_ok);
// rmdir; ENOENT is success. EBUSY (tasks still leaving) is retried until
// `timeout_ms`. Never unlinks anything inside: a real cgroup directory goes
// away with its interface files, a fake tree's must be emptied by the test.
Status remove_dir(const std::string& path, int timeout_ms = 2000);
// Names of the subdirectories of `dir`, sorted; empty if `dir` is missing.
Result<std::vector<std::string>> list_dirs(const std::string& dir);

void sleep_ms(int ms);

// True when /proc/PID/cgroup puts the process in the cgroup2 group "/<rel>"
// (e.g. after CLONE_INTO_CGROUP). Writing cgroup.procs again would cost a
// migration (an RCU grace period, ~8 ms here) for nothing.
bool in_cgroup2(pid_t pid, std::string_view rel);

}  // namespace airlock::sandbox::cgroupfs
