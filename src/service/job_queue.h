// Admission and order of the service's jobs: a bounded queue in front of a
// bounded number of running jobs, with per-tenant limits on both, scheduled
// fairly across tenants. Not thread-safe (the job service holds its lock
// around every call); pure, so it is tested without a service.
//
// Order: stride scheduling over tenants. Each tenant has a pass that grows by
// 1/weight for every job of it that starts; the next job is the oldest queued
// job of the tenant with the lowest pass among those below their running
// limit. A tenant's pass is never counted behind the queue's virtual time (the
// pass of the last tenant served), so a tenant that was idle banks no credit,
// and one that arrives behind another's long queue is served next. Ties go
// to the tenant whose oldest job was admitted first. Within a tenant: FIFO.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace airlock::service {

struct QueuedJob {
  std::string job_id;
  std::string tenant_id;
  std::chrono::steady_clock::time_point admitted = std::chrono::steady_clock::now();
};

// What take() asks of a tenant when it considers its jobs.
struct TenantShare {
  size_t max_running = 1;
  unsigned weight = 1;  // 1 to kMaxWeight (0 counts as 1); a tenant of weight 2 starts twice as
                        // many jobs as one of weight 1
};

class JobQueue {
 public:
  static constexpr unsigned kMaxWeight = 100;

  JobQueue(size_t max_running, size_t max_queued)
      : max_running_(max_running), max_queued_(max_queued) {}

  // nullopt: queued. Otherwise why not (the caller answers 429): the tenant
  // has `tenant_max_queued` queued already (checked first, and the reason
  // names the cap), or the queue holds `max_queued` jobs. A tenant with no
  // queued job is admitted even to a full queue, so other tenants can never
  // refuse a tenant's first job; the queue holds at most max_queued plus one
  // job per tenant.
  std::optional<std::string> admit(const QueuedJob& job, size_t tenant_max_queued);
  // Queues a job admitted before a restart, without limits; call in the order
  // the jobs were admitted (oldest first).
  void restore(const QueuedJob& job);
  // The next job in the fair order whose tenant runs fewer than its limit, if
  // a slot is free; it counts as running from now on.
  std::optional<QueuedJob> take(const std::function<TenantShare(const std::string& tenant)>& share);
  void finished(const std::string& tenant_id);  // a job taken earlier ended
  bool remove(const std::string& job_id);       // cancelled while queued
  bool contains(const std::string& job_id) const;

  size_t queued() const { return queued_total_; }
  size_t running() const { return running_total_; }
  size_t running_of(const std::string& tenant) const;
  size_t queued_of(const std::string& tenant) const;

 private:
  static constexpr uint64_t kStride = 1'000'000;  // pass added per job at weight 1

  struct Tenant {
    std::deque<QueuedJob> jobs;
    size_t running = 0;
    uint64_t pass = 0;
  };

  void push(const QueuedJob& job);
  void forget_if_idle(std::map<std::string, Tenant>::iterator it);

  size_t max_running_, max_queued_;
  std::map<std::string, Tenant> tenants_;
  uint64_t virtual_time_ = 0;
  size_t queued_total_ = 0, running_total_ = 0;
};

}  // namespace airlock::service
