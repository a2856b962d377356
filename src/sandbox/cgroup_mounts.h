// Pure parsing of /proc/self/mountinfo for cgroup mounts, and the choice of
// a cgroup backend from them. No file access here: detect_cgroup_backend()
// reads mountinfo once and calls these, and hands the mounts to the v1
// backend (unit tested on samples).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace airlock::sandbox {

struct CgroupMount {
  std::string mount_point;           // unescaped ("\040" -> ' ')
  std::string root;                  // the hierarchy's directory shown at mount_point
  bool v2 = false;                   // fstype cgroup2 (else cgroup v1)
  std::vector<std::string> options;  // super options: controllers, "name=systemd", "rw", ...

  bool has_option(std::string_view option) const;
};

// Every cgroup and cgroup2 mount in `mountinfo`, in file order. Lines that do
// not parse or are of another filesystem type are skipped.
std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo);

struct CgroupLayout {
  enum class Kind { kV2, kV1 };
  Kind kind = Kind::kV1;
  std::string v2_root;  // kV2: the cgroup2 mount
  std::string v1_root;  // kV1: directory holding the per-controller mounts
  std::string unified;  // kV1: a cgroup2 mount beside them, or ""
};

// v2 when `sys_fs_cgroup` is itself a cgroup2 mount whose cgroup.controllers
// (passed as `root_controllers`, "" if unknown) lists memory, pids and cpu.
// Otherwise v1, when memory, pids and cpu each have a v1 mount; `v1_root` is
// the directory holding the memory mount and `unified` a cgroup2 mount (one
// beneath v1_root preferred). Otherwise an error.
Result<CgroupLayout> choose_cgroup_layout(const std::vector<CgroupMount>& mounts,
                                          std::string_view root_controllers,
                                          std::string_view sys_fs_cgroup = "/sys/fs/cgroup");

// cgroup v2 charges socket buffers to the job's memory.max unless the kernel
// was booted with cgroup.memory=nosocket (`kernel_cmdline`: /proc/cmdline).
// Then they are outside every limit: an error that says so.
Status check_v2_socket_accounting(std::string_view kernel_cmdline);

// For each of `controllers`, the mount point of the v1 hierarchy carrying it
// (co-mounted controllers such as "cpu,cpuacct" map to the same point). A
// mount beneath `v1_root` is preferred. Controllers with no mount are absent.
std::map<std::string, std::string> v1_controller_mounts(const std::vector<CgroupMount>& mounts,
                                                        std::string_view v1_root,
                                                        const std::vector<std::string>& controllers);

// The v1 controllers a new job group is made in on a hybrid host: memory,
// pids and cpu for the limits; cpuacct for cpu time only when no cgroup2
// group counts it (cpu.stat: a cgroup2 mount on Linux 4.15 or later); freezer
// only when no cgroup2 group can kill (cgroup.kill: Linux 5.14 or later), for
// the freeze / SIGKILL / thaw fallback. Without a cgroup2 mount, both false.
// Every hierarchy more is a mkdir, a join and an rmdir per sandbox, and each
// cgroup made or removed takes the kernel's cgroup_mutex.
std::vector<std::string> v1_controllers_for_new_group(bool cgroup2_counts_cpu, bool cgroup2_kills);

}  // namespace airlock::sandbox
