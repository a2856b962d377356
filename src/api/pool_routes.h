// GET /v1/pools: the warm pool of this service as configured, and whether its
// process lives; the one figure of the dashboard's health page that neither
// /healthz nor /metrics has (docs/dashboard.md).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "http/server.h"
#include "service/job_service.h"

namespace airlock::service {

struct PoolStatus {
  size_t warm = 0;       // sandboxes kept prepared for any command
  size_t preloaded = 0;  // sandboxes with the preloaded Python
  std::vector<std::string> images;
  std::function<bool()> running;  // empty when no pool was started
  // The preloaded interpreters now (pool/tenant_interpreters.h stats, one
  // array for the jobs' pool and one for the sessions); empty: none kept.
  std::function<nlohmann::json()> interpreters;
};

// Pure: {"warm", "preloaded", "images", "process": "running"|"stopped"|"none"},
// and "interpreters" when `interpreters` is an object of stats arrays.
nlohmann::json pools_json(const PoolStatus& pools, bool running, const nlohmann::json& interpreters = nullptr);

// Pure: the totals of one stats array, {"count", "ahead", "retired", "tenants", "pss_bytes"}:
// how many interpreters take launches, how many successors were started ahead of a renewal, how
// many retired ones still run, for how many tenants, and the memory of them all. No tenant is
// named (a reader sees only its own tenant elsewhere).
nlohmann::json interpreter_totals(const nlohmann::json& stats);

void install_pool_routes(api::HttpServer& server, JobService& service, PoolStatus pools);

}  // namespace airlock::service
