#include "sys/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "base/unique_fd.h"

namespace airlock::sys {
namespace {

// An entry that is gone already (removed by someone else meanwhile) is removed.
Status remove_entries(int dirfd, int depth, int max_depth) {
  if (depth > max_depth) return fail("remove: directories nested more than " + std::to_string(max_depth) + " deep");
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
      if (!child && errno == ENOENT) continue;
      if (!child) return fail_errno("remove: open " + name);
      if (auto s = remove_entries(child.get(), depth + 1, max_depth); !s) return s;
      if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) < 0 && errno != ENOENT) return fail_errno("remove " + name);
    } else if (::unlinkat(dirfd, name.c_str(), 0) < 0 && errno != ENOENT) {
      return fail_errno("remove " + name);
    }
  }
  return {};
}

}  // namespace

Status empty_dir(int dirfd, int max_depth) { return remove_entries(dirfd, 0, max_depth); }

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
  if (auto s = empty_dir(dir.get()); !s) return s;
  if (::rmdir(path.c_str()) < 0) return fail_errno("remove " + path);
  return {};
}

}  // namespace airlock::sys
