#include "images/build_dir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>

#include "base/strings.h"
#include "sys/file_io.h"
#include "sys/remove_tree.h"

namespace airlock::images {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      int value = 0;
      bool octal = true;
      for (size_t k = 1; k <= 3; ++k) {
        char c = field[i + k];
        if (c < '0' || c > '7') octal = false;
        value = value * 8 + (c - '0');
      }
      if (octal) {
        out += static_cast<char>(value);
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> mounts_beneath(std::string_view mountinfo, std::string_view path) {
  std::string base(path);
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::vector<std::string> found;
  for (const std::string& line : split(mountinfo, '\n')) {
    std::vector<std::string> f = split(line, ' ');
    if (f.size() < 5) continue;
    std::string point = unescape(f[4]);
    if (point == base || point.starts_with(base + "/")) found.push_back(point);
  }
  return found;
}

Status remove_build_dir(const std::string& path) {
  auto info = sys::read_file("/proc/self/mountinfo", 16 << 20);
  if (!info) return fail_with("read /proc/self/mountinfo", info.error().err);
  auto mounted = mounts_beneath(*info, path);
  if (!mounted.empty())
    return fail("not removing " + path + ": " + mounted.front() +
                " is mounted beneath it (unmount it, then run airlock image gc)");
  return sys::remove_tree(path);
}

Result<BuildDir> BuildDir::create(const std::string& tmp_dir, const std::string& prefix) {
  if (auto st = sys::make_dirs(tmp_dir, 0755); !st) return std::unexpected(st.error());
  std::string tmpl = tmp_dir + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return fail_errno("create a build directory in " + tmp_dir);
  UniqueFd lock(::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) < 0) {
    int e = errno;
    ::rmdir(tmpl.c_str());
    return fail_with("lock the build directory " + tmpl, e);
  }
  ::chmod(tmpl.c_str(), 0755);
  return BuildDir(tmpl, std::move(lock));
}

BuildDir::~BuildDir() {
  if (path_.empty()) return;
  if (auto st = remove(); !st) std::fprintf(stderr, "airlock: %s\n", st.error().message().c_str());
}

Status BuildDir::remove() {
  if (path_.empty()) return {};
  auto st = remove_build_dir(path_);
  if (st) {
    path_.clear();
    lock_.reset();
  }
  return st;
}

}  // namespace airlock::images
