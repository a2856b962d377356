#include "service/job_queue.h"

#include <algorithm>

#include "base/check.h"

namespace airlock::service {

std::optional<std::string> JobQueue::admit(const QueuedJob& job, size_t tenant_max_queued) {
  if (queue_.size() >= max_queued_)
    return "the service's queue is full (" + std::to_string(max_queued_) + " jobs)";
  if (queued_of(job.tenant_id) >= tenant_max_queued)
    return "this tenant already has " + std::to_string(tenant_max_queued) + " queued jobs";
  queue_.push_back(job);
  ++queued_[job.tenant_id];
  return std::nullopt;
}

std::optional<QueuedJob> JobQueue::take(const std::function<size_t(const std::string&)>& tenant_max_running) {
  if (running_total_ >= max_running_) return std::nullopt;
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (running_of(it->tenant_id) >= tenant_max_running(it->tenant_id)) continue;
    QueuedJob job = *it;
    queue_.erase(it);
    --queued_[job.tenant_id];
    ++running_[job.tenant_id];
    ++running_total_;
    return job;
  }
  return std::nullopt;
}

void JobQueue::finished(const std::string& tenant_id) {
  AIRLOCK_CHECK(running_total_ > 0 && running_of(tenant_id) > 0);
  --running_[tenant_id];
  --running_total_;
}

bool JobQueue::remove(const std::string& job_id) {
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const QueuedJob& j) { return j.job_id == job_id; });
  if (it == queue_.end()) return false;
  --queued_[it->tenant_id];
  queue_.erase(it);
  return true;
}

bool JobQueue::contains(const std::string& job_id) const {
  return std::any_of(queue_.begin(), queue_.end(), [&](const QueuedJob& j) { return j.job_id == job_id; });
}

size_t JobQueue::running_of(const std::string& tenant) const {
  auto it = running_.find(tenant);
  return it == running_.end() ? 0 : it->second;
}

size_t JobQueue::queued_of(const std::string& tenant) const {
  auto it = queued_.find(tenant);
  return it == queued_.end() ? 0 : it->second;
}

}  // namespace airlock::service
