#include "cluster/claim_source.h"

#include "jobs/record.h"

namespace airlock::cluster {

ClaimSource::ClaimSource(store::Store& store, std::string node_id,
                         std::function<std::vector<std::string>()> warm_images,
                         std::function<void(const nlohmann::json&)> log)
    : store_(store), node_id_(std::move(node_id)), warm_images_(std::move(warm_images)), log_(std::move(log)) {}

std::optional<service::QueuedJob> ClaimSource::next() {
  std::unique_lock lock(mu_);
  while (!closed_) {
    uint64_t seen = wakes_;
    lock.unlock();
    store::ClaimOptions o;
    o.node_id = node_id_;
    o.now = jobs::now_rfc3339();
    if (warm_images_) o.warm_images = warm_images_();
    auto claimed = store_.claim_job(o);
    lock.lock();
    if (claimed && *claimed) {
      const store::JobRow& row = **claimed;
      if (closed_) {
        // Closed while claiming: hand it back for another node.
        lock.unlock();
        (void)store_.release_claim(row.id, node_id_);
        return std::nullopt;
      }
      return service::QueuedJob{row.id, row.tenant_id};
    }
    if (!claimed && log_) log_({{"event", "claim_failed"}, {"node", node_id_}, {"error", claimed.error().message()}});
    wake_.wait_for(lock, kPoll, [&] { return closed_ || wakes_ != seen; });
  }
  return std::nullopt;
}

void ClaimSource::wake() {
  {
    std::lock_guard lock(mu_);
    ++wakes_;
  }
  wake_.notify_all();
}

void ClaimSource::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  wake_.notify_all();
}

bool ClaimSource::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace airlock::cluster
