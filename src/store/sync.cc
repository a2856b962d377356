#include "store/sync.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/unique_fd.h"

namespace airlock::store {

namespace {

Status sync_path(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  if (!fd) return fail_errno("open " + path + " to sync it");
  if (::fsync(fd.get()) < 0) return fail_errno("fsync " + path);
  return {};
}

}  // namespace

Status sync_dir(const std::string& dir) { return sync_path(dir, O_DIRECTORY); }

Status sync_file_and_dirs(const std::string& path, int dirs) {
  if (auto st = sync_path(path, 0); !st) return st;
  std::string p = path;
  for (int i = 0; i < dirs; ++i) {
    auto slash = p.find_last_of('/');
    p = slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
    if (auto st = sync_dir(p); !st) return st;
  }
  return {};
}

}  // namespace airlock::store
