#include "sandbox/host_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

constexpr const char* kImageVersion = "airlock host image v1";

// Public files from the host's /etc that programs need (dynamic loader,
// alternatives links, Python and matplotlib defaults, MIME types, CA certs).
constexpr std::array<const char*, 11> kEtcImports = {
    "fonts",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "matplotlibrc",
    "python3",     "python3.11", "mime.types",   "ssl/certs",    "ca-certificates.conf"};

constexpr std::array<const char*, 6> kTopLevel = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
constexpr std::array<const char*, 6> kDevices = {"null", "zero", "full", "random", "urandom", "tty"};

// sha256 of the package list, cached by (device, inode, size, mtime).
Result<std::string> package_list_digest(const std::string& cache_dir, const std::string& list) {
  struct stat st{};
  if (::stat(list.c_str(), &st) < 0) return std::string("no-package-list");
  std::string key = list + " " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
                    std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec);
  std::string cache = cache_dir.empty() ? "" : cache_dir + "/host-image.digest";
  if (!cache.empty()) {
    if (auto cached = sys::read_file(cache, 4096); cached) {
      auto nl = cached->find('\n');
      if (nl != std::string::npos && cached->substr(0, nl) == key) return cached->substr(nl + 1);
    }
  }
  auto content = sys::read_file(list, 256 << 20);
  if (!content) return std::unexpected(content.error());
  std::string digest = Sha256::of(*content);
  if (!cache.empty()) (void)sys::write_file_atomic(cache, key + "\n" + digest);
  return digest;
}

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

Result<ImageInfo> apply_host_image(SandboxSpec& spec, const std::string& cache_dir,
                                   const std::string& package_list) {
  Sha256 digest;
  digest.update(kImageVersion);
  for (const char* name : kTopLevel) {
    std::string host = std::string("/") + name;
    struct stat st{};
    if (::lstat(host.c_str(), &st) < 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[256];
      ssize_t n = ::readlink(host.c_str(), target, sizeof(target) - 1);
      if (n <= 0) continue;
      spec.symlinks.push_back({std::string(target, static_cast<size_t>(n)), name});
    } else if (S_ISDIR(st.st_mode)) {
      spec.binds.push_back({host, name});
    }
  }
  spec.binds.push_back({"/usr", "usr"});
  for (const char* d : {"etc", "etc/ssl", "dev", "proc", "var", "run"}) spec.dirs.push_back(d);
  spec.symlinks.push_back({"../tmp", "var/tmp"});

  for (auto& f : synthetic_etc(spec.uid, spec.gid)) {
    digest.update(f.path + "\n" + f.content);
    spec.files.push_back(std::move(f));
  }
  for (const char* rel : kEtcImports) {
    std::string host = std::string("/etc/") + rel;
    struct stat st{};
    if (::stat(host.c_str(), &st) < 0) continue;
    bool is_file = S_ISREG(st.st_mode);
    if (!is_file && !S_ISDIR(st.st_mode)) continue;
    spec.binds.push_back({host, std::string("etc/") + rel, is_file});
    digest.update(std::string("bind ") + rel + "\n");
  }
  char zone[256];
  if (ssize_t n = ::readlink("/etc/localtime", zone, sizeof(zone) - 1); n > 0)
    spec.symlinks.push_back({std::string(zone, static_cast<size_t>(n)), "etc/localtime"});

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

  auto packages = package_list_digest(cache_dir, package_list);
  if (!packages) return std::unexpected(packages.error());
  digest.update("packages " + *packages);
  return ImageInfo{"host", "sha256:" + digest.hex_digest()};
}

}  // namespace airlock::sandbox
