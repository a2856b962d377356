// The preloaded interpreters of stored images for sessions: what the pool
// decides for its preloaded classes (pool/image_python.h: python3, its
// libpython and pandas in the image), one interpreter per image digest, in
// the service's process like the host's (session_service.cc). Started by the
// first session on an image (seconds: it imports the data stack), under the
// lock, so two sessions never start two; an image that cannot have one is
// remembered with the reason, which each session on it shows as its start
// note. A digest names the same bytes for ever, so neither answer goes stale.
#include "pool/image_python.h"
#include "pool/warm_pool.h"
#include "sessions/session_service.h"

namespace airlock::service {

Result<sandbox::Zygote*> SessionService::image_zygote(const jobs::ImageSource& image) {
  std::lock_guard lock(image_zygotes_mu_);
  const std::string& digest = image.info.digest;
  if (auto it = image_zygotes_.find(digest); it != image_zygotes_.end()) return it->second.get();
  if (auto it = image_zygote_refusals_.find(digest); it != image_zygote_refusals_.end())
    return fail(ErrorKind::kNotFound, it->second);
  sandbox::ZygoteOptions options;
  options.env = jobs::zygote_environment(image);
  std::string binary = config_.airlock_binary.empty() ? "/proc/self/exe" : config_.airlock_binary;
  auto started = jobs::start_image_zygote(binary, options, image, config_.state_dir + "/cache");
  if (!started) {
    // Only what the image is (no pandas, no libpython) is kept; a failure of
    // airlock's own is tried again by the next session.
    if (started.error().kind == ErrorKind::kNotFound) image_zygote_refusals_[digest] = started.error().what;
    return std::unexpected(started.error());
  }
  return (image_zygotes_[digest] = std::move(*started)).get();
}

}  // namespace airlock::service
