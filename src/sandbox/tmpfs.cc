#include "sandbox/tmpfs.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>

#include <cstdio>
#include <string>

namespace airlock::sandbox {

Result<UniqueFd> make_detached_tmpfs(const TmpfsOptions& o) {
  UniqueFd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
  if (!fs) return fail_errno("fsopen tmpfs");
  auto set = [&](const char* key, const std::string& value) -> Status {
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value.c_str(), 0) < 0)
      return fail_errno(std::string("configure tmpfs ") + key + "=" + value);
    return {};
  };
  char mode[16];
  std::snprintf(mode, sizeof(mode), "%o", static_cast<unsigned>(o.mode));
  if (auto st = set("size", std::to_string(o.size_bytes)); !st) return std::unexpected(st.error());
  if (o.max_inodes)
    if (auto st = set("nr_inodes", std::to_string(o.max_inodes)); !st) return std::unexpected(st.error());
  if (auto st = set("mode", mode); !st) return std::unexpected(st.error());
  if (auto st = set("uid", std::to_string(o.uid)); !st) return std::unexpected(st.error());
  if (auto st = set("gid", std::to_string(o.gid)); !st) return std::unexpected(st.error());
  if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0)
    return fail_errno("create tmpfs");
  unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (o.noexec ? MOUNT_ATTR_NOEXEC : 0);
  UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, attrs));
  if (!mnt) return fail_errno("fsmount tmpfs");
  return mnt;
}

Status resize_tmpfs(int mount_fd, uint64_t size_bytes, uint64_t max_inodes) {
  UniqueFd fs(::fspick(mount_fd, "", FSPICK_EMPTY_PATH | FSPICK_CLOEXEC));
  if (!fs) return fail_errno("pick a tmpfs to resize");
  std::string size = std::to_string(size_bytes), inodes = std::to_string(max_inodes);
  if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", size.c_str(), 0) < 0 ||
      (max_inodes && ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "nr_inodes", inodes.c_str(), 0) < 0) ||
      ::fsconfig(fs.get(), FSCONFIG_CMD_RECONFIGURE, nullptr, nullptr, 0) < 0)
    return fail_errno("resize a tmpfs to " + size + " bytes");
  return {};
}

Result<UniqueFd> clone_detached_mount(int mount_fd) {
  UniqueFd clone(::open_tree(mount_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
  if (!clone) return fail_errno("clone a detached mount");
  return clone;
}

}  // namespace airlock::sandbox
