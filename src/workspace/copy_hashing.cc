#include "workspace/copy_hashing.h"

#include <unistd.h>

#include "base/sha256.h"
#include "sys/file_io.h"

namespace airlock::workspace {

Result<std::optional<Copied>> copy_hashing(int in, int out, uint64_t limit) {
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
    if (copied.content.size() + chunk.size() > limit) return std::nullopt;
    hash.update(chunk);
    if (auto st = sys::write_all(out, chunk); !st) return std::unexpected(st.error());
    copied.content.append(chunk);
  }
  copied.sha256 = hash.hex_digest();
  return copied;
}

}  // namespace airlock::workspace
