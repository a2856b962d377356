// The sessions' preloaded interpreters: one per tenant and image (what the
// pool decides for its preloaded classes, pool/image_python.h: python3, its
// libpython and pandas in the image), in the service's process. A tenant's
// first session on an image starts its interpreter (seconds: it imports the
// data stack); the least recently used tenant's give way beyond
// preloaded_tenants, and one makes at most preloaded_renew_jobs sandboxes
// (pool/tenant_interpreters.h). An image that cannot have one is remembered
// with the reason, which each session on it shows as its start note; a
// digest names the same bytes for ever, so that answer never goes stale.
// The starts run on TenantInterpreters' own thread: an interpreter has
// PR_SET_PDEATHSIG, which fires when the thread that forked it ends, and a
// session's open runs on a thread that does.
#include <cstdio>

#include "pool/image_python.h"
#include "pool/warm_pool.h"
#include "sessions/session_service.h"

namespace airlock::service {

Result<std::unique_ptr<sandbox::Zygote>> SessionService::start_zygote(
    const std::string& image_class) {
  jobs::ImageSource image;
  {
    std::lock_guard lock(images_mu_);
    image = images_.at(image_class);
  }
  sandbox::ZygoteOptions options;
  options.env = jobs::zygote_environment(image);
  std::string binary = config_.airlock_binary.empty() ? "/proc/self/exe" : config_.airlock_binary;
  if (image.is_host()) {
    auto started = sandbox::Zygote::start(binary, options);
    if (!started) return fail("the sessions' preloaded interpreter: " + started.error().message());
    return started;
  }
  auto started = jobs::start_image_zygote(binary, options, image, config_.state_dir + "/cache");
  // Only what the image is (no pandas, no libpython) is kept; a failure of
  // airlock's own is tried again by the next session.
  if (!started && started.error().kind == ErrorKind::kNotFound) {
    std::lock_guard lock(images_mu_);
    image_zygote_refusals_[image.info.digest] = started.error().what;
  }
  return started;
}

Result<std::shared_ptr<sandbox::Zygote>> SessionService::tenant_zygote(
    const std::string& tenant, const jobs::ImageSource& image) {
  const std::string key = jobs::image_class(image);
  {
    std::lock_guard lock(images_mu_);
    if (!image.is_host())
      if (auto it = image_zygote_refusals_.find(image.info.digest);
          it != image_zygote_refusals_.end())
        return fail(ErrorKind::kNotFound, it->second);
    images_.emplace(key, image);
  }
  auto evicted = interpreters_->admit(tenant);
  if (!evicted.empty()) drop_spares_of(evicted);  // forks of interpreters that were retired
  return interpreters_->for_next_sandbox(tenant, key, jobs::Preload::kData);
}

nlohmann::json SessionService::interpreter_stats() {
  return interpreters_ ? interpreters_->stats() : nlohmann::json::array();
}

}  // namespace airlock::service
