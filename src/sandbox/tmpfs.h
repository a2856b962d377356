// A tmpfs made on the host side with fsopen/fsmount: a detached mount that
// belongs to no mount namespace until the sandbox child attaches it. The host
// keeps the fd, so after the job it can still read the filesystem (to collect
// /output) without any mount on the host; closing the fd frees it.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::sandbox {

struct TmpfsOptions {
  uint64_t size_bytes = 0;
  uint64_t max_inodes = 0;  // 0: kernel default
  mode_t mode = 0755;
  uid_t uid = 0;  // host ids of the root directory's owner
  gid_t gid = 0;
  bool noexec = false;
};

Result<UniqueFd> make_detached_tmpfs(const TmpfsOptions& options);

// Changes a host-made tmpfs's size and inode limit (fspick + reconfigure),
// whether or not a sandbox has attached it.
Status resize_tmpfs(int mount_fd, uint64_t size_bytes, uint64_t max_inodes);

// A second detached mount of the same filesystem (open_tree OPEN_TREE_CLONE).
// The sandbox attaches (and makes read-only) the clone while the host keeps
// writing through the original: how /inputs is filled after the sandbox was
// prepared.
Result<UniqueFd> clone_detached_mount(int mount_fd);

}  // namespace airlock::sandbox
