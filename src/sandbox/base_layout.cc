#include "sandbox/base_layout.h"

#include <string>

namespace airlock::sandbox {
namespace {
constexpr std::array<const char*, 6> kDevices = {"null", "zero", "full", "random", "urandom", "tty"};
}  // namespace

std::vector<FileEntry> synthetic_etc(uid_t uid, gid_t gid) {
  std::string u = std::to_string(uid), g = std::to_string(gid);
  return {
      {"etc/passwd",
       "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
       "sandbox:x:" + u + ":" + g + ":sandbox:/workspace:/bin/sh\n"
       "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", 0644},
      {"etc/group", "root:x:0:\nsandbox:x:" + g + ":\nnogroup:x:65534:\n", 0644},
      {"etc/hosts", "127.0.0.1\tlocalhost airlock\n::1\tlocalhost ip6-localhost ip6-loopback\n", 0644},
      {"etc/hostname", "airlock\n", 0644},
      {"etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\nnetworks: files\n", 0644},
  };
}

void add_base_layout(SandboxSpec& spec) {
  for (const char* d : {"etc", "etc/ssl", "dev", "proc", "var", "run"}) spec.dirs.push_back(d);
  spec.symlinks.push_back({"../tmp", "var/tmp"});
  for (auto& f : synthetic_etc(spec.uid, spec.gid)) spec.files.push_back(std::move(f));

  for (const char* dev : kDevices)
    spec.binds.push_back({std::string("/dev/") + dev, std::string("dev/") + dev, true, false});
  spec.symlinks.push_back({"/proc/self/fd", "dev/fd"});
  spec.symlinks.push_back({"/proc/self/fd/0", "dev/stdin"});
  spec.symlinks.push_back({"/proc/self/fd/1", "dev/stdout"});
  spec.symlinks.push_back({"/proc/self/fd/2", "dev/stderr"});

  spec.proc_mask_files = {"/proc/kcore",       "/proc/kallsyms",     "/proc/keys",
                          "/proc/key-users",   "/proc/timer_list",   "/proc/sched_debug",
                          "/proc/latency_stats", "/proc/kmsg",       "/proc/config.gz",
                          "/proc/kpagecgroup", "/proc/kpagecount",   "/proc/kpageflags",
                          "/proc/vmallocinfo", "/proc/iomem",        "/proc/ioports",
                          // Every file lock on the host, with device and inode.
                          "/proc/locks"};
  spec.proc_mask_dirs = {"/proc/acpi", "/proc/scsi", "/proc/asound", "/proc/driver"};
  spec.proc_readonly = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"};
}

}  // namespace airlock::sandbox
