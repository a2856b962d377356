// Copies a file while hashing it: what crosses the boundary is hashed as it
// crosses (input admission and output collection both use this).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace airlock::workspace {

struct Copied {
  std::string content;  // the first `keep` bytes, for type detection
  std::string sha256;
  uint64_t size = 0;    // bytes copied
};

// Streams `in` to `out`, hashing as it goes. nullopt when more than `limit`
// bytes arrive (the file grew after it was measured). The Error names the
// failing call ("read", "write") with its errno; the caller adds the file.
// A caller that does not look at the bytes keeps none (`keep` 0).
Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit, uint64_t keep = UINT64_MAX);

}  // namespace airlock::workspace
