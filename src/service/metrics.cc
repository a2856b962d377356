#include "service/metrics.h"

#include <cstdio>

namespace airlock::service {

void Histogram::observe(double seconds) {
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++counts_[i];
  ++count_;
  sum_ += seconds;
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
  std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  char line[160];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    std::snprintf(line, sizeof(line), "%s_bucket{le=\"%g\"} %llu\n", name.c_str(), kBuckets[i],
                  static_cast<unsigned long long>(counts_[i]));
    out += line;
  }
  std::snprintf(line, sizeof(line), "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name.c_str(),
                static_cast<unsigned long long>(count_), name.c_str(), sum_, name.c_str(),
                static_cast<unsigned long long>(count_));
  return out + line;
}

void Metrics::job_finished(const std::string& outcome, double run_seconds) {
  std::lock_guard lock(mu_);
  ++jobs_by_outcome_[outcome];
  duration_.observe(run_seconds);
}

void Metrics::job_started(double queued_seconds) {
  std::lock_guard lock(mu_);
  start_latency_.observe(queued_seconds);
}

void Metrics::request(int status) {
  std::lock_guard lock(mu_);
  ++requests_by_status_[status];
}

std::string Metrics::render(size_t queued, size_t running) const {
  std::lock_guard lock(mu_);
  std::string out = "# HELP airlock_jobs_total Jobs finished, by outcome.\n# TYPE airlock_jobs_total counter\n";
  for (const auto& [outcome, n] : jobs_by_outcome_)
    out += "airlock_jobs_total{outcome=\"" + outcome + "\"} " + std::to_string(n) + "\n";
  out += "# HELP airlock_http_requests_total HTTP requests, by status.\n# TYPE airlock_http_requests_total counter\n";
  for (const auto& [status, n] : requests_by_status_)
    out += "airlock_http_requests_total{status=\"" + std::to_string(status) + "\"} " + std::to_string(n) + "\n";
  out += "# HELP airlock_queue_depth Jobs waiting to start.\n# TYPE airlock_queue_depth gauge\nairlock_queue_depth " +
         std::to_string(queued) + "\n";
  out += "# HELP airlock_running_jobs Jobs running now.\n# TYPE airlock_running_jobs gauge\nairlock_running_jobs " +
         std::to_string(running) + "\n";
  out += start_latency_.render("airlock_job_start_latency_seconds", "From job creation to its sandbox starting.");
  out += duration_.render("airlock_job_duration_seconds", "From a job's start to its end.");
  return out;
}

}  // namespace airlock::service
