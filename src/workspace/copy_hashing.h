// Copies a file while hashing it: what crosses the boundary is hashed as it
// crosses (input admission, output collection, stored contents and session
// uploads all use this). Copies keep holes: a sparse file stays sparse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace airlock::workspace {

struct Copied {
  std::string content;  // the first `keep` bytes, for type detection
  std::string sha256;   // of the logical bytes, holes read as zeros
  uint64_t size = 0;    // logical bytes copied
};

// Streams `in` (from its offset) to `out`, hashing as it goes. nullopt when
// more than `limit` logical bytes arrive (the file grew after it was
// measured). Holes of a regular `in` (SEEK_DATA/SEEK_HOLE) are not read, and
// they and any all-zero 64 KiB block become holes in a regular `out`: the
// copy allocates no more disk than the data needs, while the hash, the size
// and `content` cover every logical byte. The Error names the failing call
// ("read", "write") with its errno; the caller adds the file. A caller that
// does not look at the bytes keeps none (`keep` 0).
Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit,
                                           uint64_t keep = UINT64_MAX);

// Copies exactly `size` bytes from the start of the regular file `in` to the
// start of the regular file `out`, keeping holes (copy_file_range per data
// extent, pread/pwrite where the kernel cannot). Fails when `in` ends early.
Status copy_keeping_holes(int in, int out, uint64_t size);

}  // namespace airlock::workspace
