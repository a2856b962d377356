// Copies a file while hashing it: what crosses the boundary is hashed as it
// crosses (input admission and output collection both use this).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace airlock::workspace {

struct Copied {
  std::string content;  // kept for type detection; at most `limit` bytes
  std::string sha256;
};

// Streams `in` to `out`, hashing as it goes. nullopt when more than `limit`
// bytes arrive (the file grew after it was measured). The Error names the
// failing call ("read", "write") with its errno; the caller adds the file.
Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit);

}  // namespace airlock::workspace
