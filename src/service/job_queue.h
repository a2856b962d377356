// Admission and order of the service's jobs: a bounded queue in front of a
// bounded number of running jobs, with per-tenant limits on both. Not
// thread-safe (the job service holds its lock around every call); pure, so
// it is tested without a service.
#pragma once

#include <chrono>
#include <cstddef>
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

class JobQueue {
 public:
  JobQueue(size_t max_running, size_t max_queued) : max_running_(max_running), max_queued_(max_queued) {}

  // nullopt: queued. Otherwise why not (the caller answers 429).
  std::optional<std::string> admit(const QueuedJob& job, size_t tenant_max_queued);
  // The first queued job whose tenant runs fewer than its limit, if a slot is
  // free; it counts as running from now on.
  std::optional<QueuedJob> take(const std::function<size_t(const std::string& tenant)>& tenant_max_running);
  void finished(const std::string& tenant_id);  // a job taken earlier ended
  bool remove(const std::string& job_id);        // cancelled while queued
  bool contains(const std::string& job_id) const;

  size_t queued() const { return queue_.size(); }
  size_t running() const { return running_total_; }
  size_t running_of(const std::string& tenant) const;
  size_t queued_of(const std::string& tenant) const;

 private:
  size_t max_running_, max_queued_;
  std::deque<QueuedJob> queue_;
  std::map<std::string, size_t> running_, queued_;
  size_t running_total_ = 0;
};

}  // namespace airlock::service
