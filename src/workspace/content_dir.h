// A content-addressed directory: <root>/sha256/<first 2 hex>/<hex>. Every
// stored file is written once (0400) and never modified; the same bytes are
// stored once however many artifacts or snapshots hold them. The service's
// store (store::ContentStore) builds on this; `airlock run` restores snapshots
// from it directly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace airlock::workspace {

// 64 lower-case hex characters.
bool is_sha256_hex(std::string_view text);

class ContentDir {
 public:
  // `root` holds sha256/ and tmp/ (made by store::ContentStore::create_dirs).
  explicit ContentDir(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }

  // The stored path of `sha256`; "" when it is not 64 lower-case hex characters.
  std::string path(const std::string& sha256) const;

  struct Stored {
    std::string sha256;  // of exactly the bytes copied
    std::string path;
    uint64_t size = 0;
    bool existed = false;  // the content was already stored
  };
  // Copies `fd` from its offset to its end into a temporary file under
  // <root>/tmp, hashing as it copies (no hash is ever taken on trust), and
  // links it into place under its hash (a no-op when already stored). Fails
  // (err EFBIG) when more than `max_bytes` arrive, or when `expected_sha256` is not empty
  // and differs. Two calls with the same content may run at once.
  Result<Stored> put_fd(int fd, uint64_t max_bytes, const std::string& expected_sha256 = "") const;

  // Opens the stored file of `sha256` read-only. A missing file fails with
  // err ENOENT and says "not stored".
  Result<UniqueFd> open(const std::string& sha256) const;

 protected:
  std::string root_;
};

}  // namespace airlock::workspace
