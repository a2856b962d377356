// The service's counters and histograms, rendered in Prometheus text format
// for GET /metrics. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace airlock::service {

class Histogram {
 public:
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1,    5,     30};
  void observe(double seconds);
  std::string render(const std::string& name, const std::string& help) const;

 private:
  std::array<uint64_t, kBuckets.size()> counts_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  void job_finished(const std::string& outcome, double run_seconds);
  void job_started(double queued_seconds);
  void teardown_failed();  // a job's sandbox could not be removed after its record
  void request(int status);
  void session_opened();
  void session_closed(const std::string& reason);
  void session_call(const std::string& status, double seconds);
  size_t sessions_open() const;  // opened here and not closed yet (a worker's heartbeat)
  // `queued`, `running`: gauges read at render time.
  std::string render(size_t queued, size_t running) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> jobs_by_outcome_;
  uint64_t teardown_failures_ = 0;
  std::map<int, uint64_t> requests_by_status_;
  Histogram start_latency_, duration_;
  uint64_t sessions_opened_ = 0;
  std::map<std::string, uint64_t> sessions_by_reason_, calls_by_status_;
  Histogram call_duration_;
};

}  // namespace airlock::service
