// The content-addressed artifact directory: <root>/sha256/<first 2 hex>/<hex>.
// Files are written once (read-only, 0400) and never modified; the same bytes
// are stored once however many jobs or snapshots hold them. The layout, and
// put_fd()/open(), are workspace::ContentDir's (the engine restores snapshots
// from the same directory).
#pragma once

#include <string>

#include "base/result.h"
#include "workspace/content_dir.h"

namespace airlock::store {

class ContentStore : public workspace::ContentDir {
 public:
  // `root` is <data_dir>/artifacts; create_dirs() makes it (0700) with sha256/ and tmp/.
  explicit ContentStore(std::string root) : ContentDir(std::move(root)) {}
  Status create_dirs() const;

  // Copies `source` (a regular file, not followed if it is a symlink) into a
  // temporary file while hashing it, refuses it when the hash differs from
  // `expected_sha256`, and links it into place (no-op when already stored).
  // Two calls with the same content may run at once.
  struct Put {
    std::string path;
    bool existed = false;  // the content was already stored
  };
  Result<Put> put(const std::string& source, const std::string& expected_sha256) const;

  // Removes the stored file of `sha256`; a missing file is not an error.
  Status remove(const std::string& sha256) const;
};

}  // namespace airlock::store
