#include "service/job_queue.h"

#include <algorithm>

#include "base/check.h"

namespace airlock::service {

std::optional<std::string> JobQueue::admit(const QueuedJob& job, size_t tenant_max_queued) {
  const size_t mine = queued_of(job.tenant_id);
  if (mine >= tenant_max_queued)
    return "this tenant already has " + std::to_string(mine) +
           " queued jobs, its cap (tenant_max_queued " + std::to_string(tenant_max_queued) + ")";
  if (mine > 0 && queued_total_ >= max_queued_)
    return "the service's queue is full (" + std::to_string(max_queued_) + " jobs)";
  push(job);
  return std::nullopt;
}

void JobQueue::restore(const QueuedJob& job) { push(job); }

void JobQueue::push(const QueuedJob& job) {
  tenants_[job.tenant_id].jobs.push_back(job);
  ++queued_total_;
}

std::optional<QueuedJob> JobQueue::take(
    const std::function<TenantShare(const std::string&)>& share) {
  if (running_total_ >= max_running_) return std::nullopt;
  auto best = tenants_.end();
  uint64_t best_pass = 0;
  unsigned best_weight = 1;
  for (auto it = tenants_.begin(); it != tenants_.end(); ++it) {
    Tenant& t = it->second;
    if (t.jobs.empty()) continue;
    const TenantShare s = share(it->first);
    if (t.running >= s.max_running) continue;
    const uint64_t pass = std::max(t.pass, virtual_time_);
    if (best == tenants_.end() || pass < best_pass ||
        (pass == best_pass && t.jobs.front().admitted < best->second.jobs.front().admitted)) {
      best = it;
      best_pass = pass;
      best_weight = std::clamp(s.weight, 1u, kMaxWeight);
    }
  }
  if (best == tenants_.end()) return std::nullopt;
  Tenant& t = best->second;
  QueuedJob job = std::move(t.jobs.front());
  t.jobs.pop_front();
  virtual_time_ = std::max(virtual_time_, best_pass);
  t.pass = best_pass + kStride / best_weight;
  ++t.running;
  --queued_total_;
  ++running_total_;
  return job;
}

void JobQueue::finished(const std::string& tenant_id) {
  auto it = tenants_.find(tenant_id);
  AIRLOCK_CHECK(running_total_ > 0 && it != tenants_.end() && it->second.running > 0);
  --it->second.running;
  --running_total_;
  forget_if_idle(it);
}

// A tenant with nothing queued or running whose pass the virtual time has
// reached carries no state worth keeping: on return it would start at the
// virtual time anyway.
void JobQueue::forget_if_idle(std::map<std::string, Tenant>::iterator it) {
  const Tenant& t = it->second;
  if (t.jobs.empty() && t.running == 0 && t.pass <= virtual_time_) tenants_.erase(it);
}

bool JobQueue::remove(const std::string& job_id) {
  for (auto it = tenants_.begin(); it != tenants_.end(); ++it) {
    auto& jobs = it->second.jobs;
    auto j = std::find_if(jobs.begin(), jobs.end(),
                          [&](const QueuedJob& q) { return q.job_id == job_id; });
    if (j == jobs.end()) continue;
    jobs.erase(j);
    --queued_total_;
    forget_if_idle(it);
    return true;
  }
  return false;
}

bool JobQueue::contains(const std::string& job_id) const {
  for (const auto& [tenant, t] : tenants_)
    if (std::any_of(t.jobs.begin(), t.jobs.end(),
                    [&](const QueuedJob& q) { return q.job_id == job_id; }))
      return true;
  return false;
}

size_t JobQueue::running_of(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.running;
}

size_t JobQueue::queued_of(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.jobs.size();
}

}  // namespace airlock::service
