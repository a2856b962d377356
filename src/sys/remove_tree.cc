#include "sys/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "base/unique_fd.h"

namespace airlock::sys {
namespace {

Status empty_dir(int dirfd, int depth) {
  if (depth > 4096) return fail("remove: directory tree too deep");
  int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return fail_errno("remove: open directory");
  DIR* dir = ::fdopendir(dup);
  if (!dir) {
    ::close(dup);
    return fail_errno("remove: read directory");
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  for (const auto& name : names) {
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd child(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) return fail_errno("remove: open " + name);
      if (auto s = empty_dir(child.get(), depth + 1); !s) return s;
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) < 0) return fail_errno("remove " + name);
    } else if (::unlinkat(dirfd, name.c_str(), 0) < 0) {
      return fail_errno("remove " + name);
    }
  }
  return {};
}

}  // namespace

Status remove_tree(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) < 0) {
    if (errno == ENOENT) return {};
    return fail_errno("remove " + path);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) < 0) return fail_errno("remove " + path);
    return {};
  }
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return fail_errno("remove " + path);
  if (auto s = empty_dir(dir.get(), 0); !s) return s;
  if (::rmdir(path.c_str()) < 0) return fail_errno("remove " + path);
  return {};
}

}  // namespace airlock::sys
