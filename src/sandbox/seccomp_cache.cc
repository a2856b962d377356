#include "sandbox/seccomp_cache.h"

#include <seccomp.h>
#include <sys/stat.h>

#include <cstring>
#include <optional>

#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::sandbox {
namespace {

std::string cache_key() {
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

}  // namespace

Result<SeccompProgram> load_or_build_job_filter(const std::string& cache_dir) {
  if (cache_dir.empty()) return build_job_filter();
  std::string path = cache_dir + "/job-filter.bpf";
  std::string key = cache_key();
  if (auto file = sys::read_file(path, 1 << 20); file)
    if (auto cached = parse(*file, key)) return std::move(*cached);
  auto built = build_job_filter();
  if (!built) return built;
  std::string bytes = program_bytes(*built);
  (void)sys::write_file_atomic(path, key + "\n" + Sha256::of(bytes) + "\n" + bytes, 0600);
  return built;
}

}  // namespace airlock::sandbox
