// Recursive removal that never follows a symlink and never leaves its start
// directory (unlinkat relative to directory fds, no path strings re-resolved).
#pragma once

#include <string>

#include "base/result.h"

namespace airlock::sys {

// Removes `path` and everything beneath it. Missing `path` is success.
Status remove_tree(const std::string& path);
// Removes everything beneath the directory `dirfd` (it stays, empty); fails
// on directories nested deeper than `max_depth`.
Status empty_dir(int dirfd, int max_depth = 4096);

}  // namespace airlock::sys
