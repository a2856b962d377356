// `airlock estimate`: a monthly cost from a workload description (task
// types, jobs per day, their typical usage; sessions per day and their
// length) or from a tenant's measured usage over its last N days, under a
// rate card. Pure: exact integer arithmetic, every assumption written out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "usage/rate_card.h"

namespace airlock::usage {

inline constexpr uint64_t kDaysPerMonth = 30;

struct TaskType {
  std::string name;
  uint64_t jobs_per_day = 0;
  uint64_t wall_ms = 0, cpu_ms = 0, peak_memory_mb = 0, egress_kb = 0;
  uint64_t output_mb = 0;     // artifacts each job keeps
  uint64_t kept_days = 0;     // how long they are kept (retention)
};

struct SessionType {
  std::string name;
  uint64_t sessions_per_day = 0;
  uint64_t minutes = 0;  // open, idle time included
  uint64_t cpu_ms = 0, peak_memory_mb = 0;
};

struct Workload {
  std::vector<TaskType> tasks;
  std::vector<SessionType> sessions;
};

// {"tasks": [{"name", "jobs_per_day", "wall_ms", "cpu_ms", "peak_memory_mb", "egress_kb", "output_mb",
// "kept_days"}], "sessions": [{"name", "sessions_per_day", "minutes", "cpu_ms", "peak_memory_mb"}]}:
// whole non-negative numbers, unknown fields refused.
Result<Workload> parse_workload(const nlohmann::json& j);

// The month (30 days) of one workload: per task and session type its
// figures and cost, the total, and the assumptions as sentences.
nlohmann::json estimate_month(const Workload& w, const RateCard& card);

// A measured total (a GET /v1/usage "total") over `days` days scaled to 30.
nlohmann::json estimate_from_measured(const nlohmann::json& total, uint64_t days, const RateCard& card);

}  // namespace airlock::usage
