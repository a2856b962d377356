#include "sandbox/seccomp_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "base/check.h"
#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

constexpr char kPrefix[] = "job-filter-";
constexpr char kSuffix[] = ".bpf";
constexpr size_t kKeyChars = 16;  // of the key's hex: enough to tell executables apart

}  // namespace

std::string job_filter_key() {
  struct stat st{};
  std::string key = "airlock job filter v1";
  if (::stat("/proc/self/exe", &st) == 0)
    key += " exe " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
           std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  const scmp_version* v = seccomp_version();
  key += " libseccomp " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->micro);
  return Sha256::of(key);
}

std::string job_filter_path(const std::string& cache_dir, const std::string& key) {
  AIRLOCK_CHECK(!key.empty() && key.find_first_not_of("0123456789abcdef") == std::string::npos);
  return cache_dir + "/" + kPrefix + key.substr(0, kKeyChars) + kSuffix;
}

namespace {

std::string program_bytes(const SeccompProgram& p) {
  return std::string(reinterpret_cast<const char*>(p.instructions.data()),
                     p.instructions.size() * sizeof(sock_filter));
}

// File: "<key>\n<sha256 of bytes>\n<bytes>".
std::optional<SeccompProgram> parse(const std::string& file, const std::string& key) {
  size_t k = file.find('\n');
  if (k == std::string::npos || file.compare(0, k, key) != 0) return std::nullopt;
  size_t h = file.find('\n', k + 1);
  if (h == std::string::npos) return std::nullopt;
  std::string bytes = file.substr(h + 1);
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 ||
      Sha256::of(bytes) != file.substr(k + 1, h - k - 1))
    return std::nullopt;
  SeccompProgram p;
  p.instructions.resize(bytes.size() / sizeof(sock_filter));
  std::memcpy(p.instructions.data(), bytes.data(), bytes.size());
  return p;
}

bool is_filter_file(const char* name) {
  size_t n = std::strlen(name);
  return n > sizeof(kPrefix) - 1 + sizeof(kSuffix) - 1 &&
         std::strncmp(name, kPrefix, sizeof(kPrefix) - 1) == 0 &&
         std::strcmp(name + n - (sizeof(kSuffix) - 1), kSuffix) == 0;
}

// Removes the oldest filter files but `kKeptJobFilters` (the one just stored
// among them), and the single file of airlocks before one file per key. Best
// effort: a file that cannot be removed is built again at worst.
void prune(const std::string& cache_dir) {
  ::unlink((cache_dir + "/job-filter.bpf").c_str());
  DIR* dir = ::opendir(cache_dir.c_str());
  if (dir == nullptr) return;
  std::vector<std::pair<timespec, std::string>> files;
  while (dirent* e = ::readdir(dir)) {
    struct stat st {};
    if (!is_filter_file(e->d_name) ||
        ::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    files.emplace_back(st.st_mtim, e->d_name);
  }
  ::closedir(dir);
  if (files.size() <= kKeptJobFilters) return;
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.first.tv_sec != b.first.tv_sec ? a.first.tv_sec > b.first.tv_sec
                                            : a.first.tv_nsec > b.first.tv_nsec;
  });
  for (size_t i = kKeptJobFilters; i < files.size(); ++i)
    ::unlink((cache_dir + "/" + files[i].second).c_str());
}

}  // namespace

Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir,
                                                const std::string& key) {
  if (cache_dir.empty()) return build_job_filter();
  std::string path = job_filter_path(cache_dir, key);
  if (auto file = sys::read_file(path, 1 << 20); file)
    if (auto cached = parse(*file, key)) return std::move(*cached);
  auto built = build_job_filter();
  if (!built) return built;
  std::string bytes = program_bytes(*built);
  if (sys::write_file_atomic(path, key + "\n" + Sha256::of(bytes) + "\n" + bytes, 0600))
    prune(cache_dir);
  return built;
}

Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir) {
  return load_or_build_job_filter(cache_dir, cache_dir.empty() ? std::string() : job_filter_key());
}

}  // namespace airlock::sandbox
