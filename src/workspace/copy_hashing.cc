#include "workspace/copy_hashing.h"

#include <unistd.h>

#include <algorithm>

#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::workspace {

Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit, uint64_t keep) {
  Copied copied;
  Sha256 hash;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno("read");
    }
    if (n == 0) break;
    const std::string_view chunk(buf, static_cast<size_t>(n));
    if (chunk.size() > limit - copied.size) return std::nullopt;
    hash.update(chunk);
    if (auto st = sys::write_all(out, chunk); !st) return std::unexpected(st.error());
    if (copied.content.size() < keep)
      copied.content.append(chunk.substr(0, static_cast<size_t>(std::min<uint64_t>(chunk.size(), keep - copied.content.size()))));
    copied.size += chunk.size();
  }
  copied.sha256 = hash.hex_digest();
  return copied;
}

}  // namespace airlock::workspace
