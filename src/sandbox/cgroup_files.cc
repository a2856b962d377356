// Shared cgroupfs file helpers of the cgroup backends (see cgroup_files.h).
#include "sandbox/cgroup_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <thread>

#include "base/unique_fd.h"
#include "sys/file_io.h"

namespace airlock::sandbox::cgroupfs {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Calls `fn(line)` for each line of `text`.
template <class Fn>
void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

Status collect_pids(const std::string& dir, std::vector<pid_t>& out, int depth) {
  if (depth > 32) return fail("cgroup tree too deep at " + dir);
  auto text = sys::read_file(join(dir, "cgroup.procs"));
  if (!text) {
    if (text.error().err == ENOENT) return {};  // the group went away meanwhile
    return std::unexpected(text.error());
  }
  for (pid_t pid : parse_pids(*text)) out.push_back(pid);
  auto subdirs = list_dirs(dir);
  if (!subdirs) return std::unexpected(subdirs.error());
  for (const auto& sub : *subdirs) {
    if (auto st = collect_pids(join(dir, sub), out, depth + 1); !st) return st;
  }
  return {};
}

}  // namespace

std::optional<uint64_t> parse_keyed(std::string_view text, std::string_view key) {
  std::optional<uint64_t> found;
  for_each_line(text, [&](std::string_view line) {
    if (found) return;
    line = trim(line);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.substr(0, sp) != key) return;
    found = to_u64(trim(line.substr(sp + 1)));
  });
  return found;
}

std::vector<std::string> parse_words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find_first_of(" \t\n", i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    if (!word.empty() && word.front() == '+') word.remove_prefix(1);
    if (!word.empty()) words.emplace_back(word);
    i = j + 1;
  }
  return words;
}

std::vector<pid_t> parse_pids(std::string_view text) {
  std::vector<pid_t> pids;
  for_each_line(text, [&](std::string_view line) {
    auto v = to_u64(trim(line));
    if (v && *v > 0 && *v < (1u << 30)) pids.push_back(static_cast<pid_t>(*v));
  });
  return pids;
}

uint64_t cpu_quota_us(double cpus) {
  constexpr uint64_t kMinCpuQuotaUs = 1000;
  auto quota = static_cast<uint64_t>(std::llround(cpus * static_cast<double>(kCpuPeriodUs)));
  return std::max(quota, kMinCpuQuotaUs);
}

std::map<std::string, std::string> parse_v1_membership(std::string_view text) {
  std::map<std::string, std::string> out;
  for_each_line(text, [&](std::string_view line) {
    size_t a = line.find(':');
    size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) return;
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    std::string_view path = line.substr(b + 1);
    while (!controllers.empty()) {
      size_t comma = controllers.find(',');
      std::string_view c = controllers.substr(0, comma);
      if (!c.empty()) out[std::string(c)] = std::string(path);
      if (comma == std::string_view::npos) break;
      controllers.remove_prefix(comma + 1);
    }
  });
  return out;
}

Status check_group_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos || name.size() > 200) {
    return fail("invalid cgroup name '" + std::string(name) + "'");
  }
  return {};
}

std::string join(std::string_view dir, std::string_view file) {
  std::string out(dir);
  out += '/';
  out += file;
  return out;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Result<uint64_t> read_u64(const std::string& path) {
  auto text = sys::read_file(path, 4096);
  if (!text) return std::unexpected(text.error());
  std::string_view s = trim(*text);
  if (s == "max") return UINT64_MAX;
  auto v = to_u64(s);
  if (!v) return fail(path + ": not a number");
  return *v;
}

Result<uint64_t> read_keyed(const std::string& path, std::string_view key) {
  auto text = sys::read_file(path, 1 << 20);
  if (!text) return std::unexpected(text.error());
  auto v = parse_keyed(*text, key);
  if (!v) return fail(path + ": no '" + std::string(key) + "'");
  return *v;
}

Result<uint64_t> zero_if_missing(Result<uint64_t> value) {
  if (!value && value.error().err == ENOENT) return 0;
  return value;
}

Result<std::vector<pid_t>> read_pids_recursive(const std::string& dir) {
  std::vector<pid_t> pids;
  if (auto st = collect_pids(dir, pids, 0); !st) return std::unexpected(st.error());
  return pids;
}

Result<bool> populated(const std::string& events_path) {
  auto v = read_keyed(events_path, "populated");
  if (!v) return std::unexpected(v.error());
  return *v != 0;
}

Status wait_unpopulated(const std::string& events_path, Clock::time_point deadline) {
  UniqueFd fd(::open(events_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return fail_errno("open " + events_path);
  for (;;) {
    // pread at 0 re-reads a seq_file from the start and re-arms POLLPRI.
    char buf[256];
    ssize_t n = ::pread(fd.get(), buf, sizeof(buf) - 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read " + events_path);
    }
    auto value = parse_keyed(std::string_view(buf, static_cast<size_t>(n)), "populated");
    if (!value) return fail(events_path + ": no 'populated'");
    if (*value == 0) return {};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return fail_with("cgroup still populated: " + events_path, ETIMEDOUT);
    pollfd pfd{.fd = fd.get(), .events = POLLPRI, .revents = 0};
    if (::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 20))) < 0 && errno != EINTR) {
      return fail_errno("poll " + events_path);
    }
  }
}

Result<bool> make_dir(const std::string& path, bool exist_ok) {
  if (::mkdir(path.c_str(), 0755) == 0) return true;
  if (errno == EEXIST && exist_ok) return false;
  return fail_errno("mkdir " + path);
}

Status remove_dir(const std::string& path, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int delay = 1;; delay = std::min(delay * 2, 50)) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return {};
    if (errno != EBUSY || Clock::now() >= deadline) return fail_errno("rmdir " + path);
    sleep_ms(delay);
  }
}

Result<std::vector<std::string>> list_dirs(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return names;
    return fail_errno("opendir " + dir);
  }
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st{};
      is_dir = ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

bool in_cgroup2(pid_t pid, std::string_view rel) {
  auto text = sys::read_file("/proc/" + std::to_string(pid) + "/cgroup", 1 << 16);
  if (!text) return false;
  std::string want = "0::/" + std::string(rel) + "\n";
  size_t pos = 0;
  while (pos < text->size()) {
    size_t end = text->find('\n', pos);
    if (end == std::string::npos) end = text->size() - 1;
    if (text->compare(pos, end - pos + 1, want) == 0) return true;
    pos = end + 1;
  }
  return false;
}

Result<uint64_t> read_cpu_stat_ns(const std::string& dir) {
  auto usec = read_keyed(join(dir, "cpu.stat"), "usage_usec");
  if (!usec) return std::unexpected(usec.error());
  return *usec * 1000;
}

}  // namespace airlock::sandbox::cgroupfs
