// The preloaded interpreters of stored images for sessions: what the pool
// decides for its preloaded classes (pool/image_python.h: python3, its
// libpython and pandas in the image), one interpreter per image digest, in
// the service's process like the host's (session_service.cc). Started by the
// first session on an image (seconds: it imports the data stack), under the
// lock, so two sessions never start two; an image that cannot have one is
// remembered with the reason, which each session on it shows as its start
// note. A digest names the same bytes for ever, so neither answer goes stale.
// The start itself runs on the service's zygote starter thread: the
// interpreter has PR_SET_PDEATHSIG, which fires when the thread that forked
// it ends, and a session's open runs on a thread that does (seen: the next
// session got "send a message with descriptors: Broken pipe").
#include <optional>

#include "pool/image_python.h"
#include "pool/warm_pool.h"
#include "sessions/session_service.h"

namespace airlock::service {

Result<sandbox::Zygote*> SessionService::image_zygote(const jobs::ImageSource& image) {
  std::lock_guard call(image_zygote_calls_mu_);  // the maps are under it
  std::unique_lock lock(image_zygotes_mu_);
  const std::string& digest = image.info.digest;
  if (auto it = image_zygotes_.find(digest); it != image_zygotes_.end()) return it->second.get();
  if (auto it = image_zygote_refusals_.find(digest); it != image_zygote_refusals_.end())
    return fail(ErrorKind::kNotFound, it->second);
  sandbox::ZygoteOptions options;
  options.env = jobs::zygote_environment(image);
  std::string binary = config_.airlock_binary.empty() ? "/proc/self/exe" : config_.airlock_binary;
  if (zygote_starter_stopping_ || !zygote_starter_.joinable()) return fail("the service is stopping");
  std::optional<Result<std::unique_ptr<sandbox::Zygote>>> result;
  zygote_starts_.push_back([&] {
    auto made = jobs::start_image_zygote(binary, options, image, config_.state_dir + "/cache");
    std::lock_guard done(image_zygotes_mu_);
    result.emplace(std::move(made));
    zygote_starter_wake_.notify_all();
  });
  zygote_starter_wake_.notify_all();
  zygote_starter_wake_.wait(lock, [&] { return result.has_value(); });
  auto started = std::move(*result);
  if (!started) {
    // Only what the image is (no pandas, no libpython) is kept; a failure of
    // airlock's own is tried again by the next session.
    if (started.error().kind == ErrorKind::kNotFound) image_zygote_refusals_[digest] = started.error().what;
    return std::unexpected(started.error());
  }
  return (image_zygotes_[digest] = std::move(*started)).get();
}

void SessionService::zygote_starter_loop() {
  std::unique_lock lock(image_zygotes_mu_);
  for (;;) {
    zygote_starter_wake_.wait(lock, [&] { return zygote_starter_stopping_ || !zygote_starts_.empty(); });
    if (zygote_starts_.empty()) return;  // stopping, nothing asked
    auto task = std::move(zygote_starts_.front());
    zygote_starts_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace airlock::service
