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

void Metrics::teardown_failed() {
  std::lock_guard lock(mu_);
  ++teardown_failures_;
}

void Metrics::request(int status) {
  std::lock_guard lock(mu_);
  ++requests_by_status_[status];
}

void Metrics::session_opened() {
  std::lock_guard lock(mu_);
  ++sessions_opened_;
}

size_t Metrics::sessions_open() const {
  std::lock_guard lock(mu_);
  uint64_t closed = 0;
  for (const auto& [reason, n] : sessions_by_reason_) closed += n;
  return sessions_opened_ >= closed ? sessions_opened_ - closed : 0;
}

void Metrics::session_closed(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++sessions_by_reason_[reason];
}

void Metrics::session_call(const std::string& status, double seconds) {
  std::lock_guard lock(mu_);
  ++calls_by_status_[status];
  call_duration_.observe(seconds);
}

std::string Metrics::render(size_t queued, size_t running) const {
  std::lock_guard lock(mu_);
  std::string out = "# HELP airlock_jobs_total Jobs finished, by outcome.\n# TYPE airlock_jobs_total counter\n";
  for (const auto& [outcome, n] : jobs_by_outcome_)
    out += "airlock_jobs_total{outcome=\"" + outcome + "\"} " + std::to_string(n) + "\n";
  out += "# HELP airlock_job_teardown_failures_total Jobs whose sandbox (mounts, cgroup, staging directory) could "
         "not be removed after their record; airlock sweep removes what is left.\n"
         "# TYPE airlock_job_teardown_failures_total counter\nairlock_job_teardown_failures_total " +
         std::to_string(teardown_failures_) + "\n";
  out += "# HELP airlock_http_requests_total HTTP requests, by status.\n# TYPE airlock_http_requests_total counter\n";
  for (const auto& [status, n] : requests_by_status_)
    out += "airlock_http_requests_total{status=\"" + std::to_string(status) + "\"} " + std::to_string(n) + "\n";
  out += "# HELP airlock_queue_depth Jobs waiting to start.\n# TYPE airlock_queue_depth gauge\nairlock_queue_depth " +
         std::to_string(queued) + "\n";
  out += "# HELP airlock_running_jobs Jobs running now.\n# TYPE airlock_running_jobs gauge\nairlock_running_jobs " +
         std::to_string(running) + "\n";
  out += start_latency_.render("airlock_job_start_latency_seconds", "From job creation to its sandbox starting.");
  out += duration_.render("airlock_job_duration_seconds", "From a job's start to its end.");
  uint64_t closed = 0;
  out += "# HELP airlock_sessions_closed_total Sessions closed, by reason.\n"
         "# TYPE airlock_sessions_closed_total counter\n";
  for (const auto& [reason, n] : sessions_by_reason_) {
    out += "airlock_sessions_closed_total{reason=\"" + reason + "\"} " + std::to_string(n) + "\n";
    closed += n;
  }
  out += "# HELP airlock_sessions_open Sessions open (or opening) now.\n# TYPE airlock_sessions_open gauge\n"
         "airlock_sessions_open " + std::to_string(sessions_opened_ >= closed ? sessions_opened_ - closed : 0) + "\n";
  out += "# HELP airlock_session_calls_total Session calls ended, by status.\n"
         "# TYPE airlock_session_calls_total counter\n";
  for (const auto& [status, n] : calls_by_status_)
    out += "airlock_session_calls_total{status=\"" + status + "\"} " + std::to_string(n) + "\n";
  out += call_duration_.render("airlock_session_call_duration_seconds", "From a session call's start to its end.");
  return out;
}

}  // namespace airlock::service
