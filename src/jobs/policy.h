// What a job may use: limits, environment, input and output policy. Plain
// data with defaults; parsed from the CLI (run_request.h) or from an API request
// (service/job_request.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "egress/policy.h"
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
  std::vector<egress::Rule> allow;  // network destinations through the gateway; empty: none
  std::vector<std::pair<std::string, std::string>> env;  // user variables, in order
  workspace::InputPolicy inputs;
  workspace::OutputPolicy outputs;
};

// The fixed minimal environment every job gets (user --env may override).
std::vector<std::pair<std::string, std::string>> base_environment();

// Where a job with network rules finds the egress gateway: 127.0.0.1 in its
// own network namespace. A port below 1024, so the job's unprivileged code
// cannot bind it first.
inline constexpr uint16_t kGatewayPort = 980;

// HTTP_PROXY, HTTPS_PROXY (both cases) pointing at the gateway; NO_PROXY empty.
std::vector<std::pair<std::string, std::string>> proxy_environment();

// base_environment() (plus proxy_environment() when the policy allows any
// destination) overlaid with policy.env, as NAME=VALUE strings.
std::vector<std::string> job_environment(const JobPolicy& policy);

}  // namespace airlock::jobs
