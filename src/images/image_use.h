// Holding an image while it is used: a pool, a running job, a session take
// flock(LOCK_SH) on <root>/inuse/<hex>.lock for as long as they use it, and
// `gc` and `rm` (which try LOCK_EX) leave a held image alone.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "images/image_store.h"

namespace airlock::images {

class ImageUse {
 public:
  // Fails when the image has left the store (removed between resolve and hold).
  [[nodiscard]] static Result<ImageUse> hold(const ImageStore& store, const StoredImage& image);

  ImageUse(ImageUse&&) = default;
  ImageUse& operator=(ImageUse&&) = default;

  const std::string& digest() const { return digest_; }

 private:
  ImageUse(UniqueFd lock, std::string digest)
      : lock_(std::move(lock)), digest_(std::move(digest)) {}

  UniqueFd lock_;
  std::string digest_;
};

// The exclusive side, for rm and gc (under the store lock): an fd holding
// LOCK_EX on the image's lock file, or an error saying who holds it.
[[nodiscard]] Result<UniqueFd> claim_unused(const ImageStore& store, std::string_view digest);

// Pids in /proc/locks text that hold a FLOCK on the file (dev, ino). Pure.
[[nodiscard]] std::vector<pid_t> flock_holders(std::string_view proc_locks, dev_t dev, ino_t ino);

}  // namespace airlock::images
