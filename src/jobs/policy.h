// What a job may use: limits, environment, input and output policy. Plain
// data with defaults; parsed from the CLI (run_request.h) or, later, the API.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workspace/manifest.h"

namespace airlock::jobs {

struct JobPolicy {
  uint64_t timeout_ms = 60'000;
  uint64_t cpu_time_ms = 60'000;
  uint64_t memory_bytes = 512ull << 20;
  uint64_t pids = 128;
  double cpus = 1.0;
  uint64_t workspace_bytes = 256ull << 20;  // each of /workspace, /tmp, /dev/shm; /output too
  uint64_t stdout_cap_bytes = 1ull << 20;   // kept and echoed, each of stdout and stderr
  std::string network = "none";
  std::vector<std::pair<std::string, std::string>> env;  // user variables, in order
  workspace::InputPolicy inputs;
  workspace::OutputPolicy outputs;
};

// The fixed minimal environment every job gets (user --env may override).
std::vector<std::pair<std::string, std::string>> base_environment();

// base_environment() overlaid with policy.env, as NAME=VALUE strings.
std::vector<std::string> job_environment(const JobPolicy& policy);

}  // namespace airlock::jobs
