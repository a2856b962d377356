// Recursive removal that never follows a symlink and never leaves its start
// directory (unlinkat relative to directory fds, no path strings re-resolved).
#pragma once

#include <string>

#include "base/result.h"

namespace airlock::sys {

// Removes `path` and everything beneath it. Missing `path` is success.
Status remove_tree(const std::string& path);

}  // namespace airlock::sys
