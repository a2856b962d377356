#include "sandbox/host_image.h"

#include <sys/stat.h>
#include <unistd.h>

#include "base/sha256.h"
#include "sandbox/base_layout.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

constexpr const char* kImageVersion = "airlock host image v1";

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
  add_base_layout(spec);
  for (const auto& f : synthetic_etc(spec.uid, spec.gid)) digest.update(f.path + "\n" + f.content);
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

  auto packages = package_list_digest(cache_dir, package_list);
  if (!packages) return std::unexpected(packages.error());
  digest.update("packages " + *packages);
  return ImageInfo{"host", "sha256:" + digest.hex_digest()};
}

}  // namespace airlock::sandbox
