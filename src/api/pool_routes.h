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
};

// Pure: {"warm", "preloaded", "images", "process": "running"|"stopped"|"none"}.
nlohmann::json pools_json(const PoolStatus& pools, bool running);

void install_pool_routes(api::HttpServer& server, JobService& service, PoolStatus pools);

}  // namespace airlock::service
