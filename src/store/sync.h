// Making files durable before a row names them (docs/store.md "Durability"):
// a committed row must never name a file whose bytes or whose directory entry
// a power loss could still take away.
#pragma once

#include <string>

#include "base/result.h"

namespace airlock::store {

// fsync(2) of the directory `dir` (its entries: a link or rename in it).
Status sync_dir(const std::string& dir);
// fsync(2) of the file `path`, then of the `dirs` directories above it
// (1: the one that holds it; 2: that one's too, when it is new as well).
Status sync_file_and_dirs(const std::string& path, int dirs = 1);

}  // namespace airlock::store
