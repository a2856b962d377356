// POST /v1/jobs bodies as the service takes them (src/service/route_helpers.cc
// json_body, then parse_job_request and parse_checks), and the property the
// service relies on: an accepted request becomes an engine request
// (run_request_for) within the bounds `airlock run`'s own parser enforces.
#include <cmath>

#include <nlohmann/json.hpp>

#include "egress/policy.h"
#include "fuzz/fuzz.h"
#include "jobs/run_request.h"
#include "service/job_request.h"
#include "validate/checks.h"

namespace {

airlock::service::PolicyCaps caps() {
  airlock::service::PolicyCaps c;
  c.network = airlock::egress::parse_policy(nlohmann::json::parse(R"([
      {"host": "*.example.com", "port": 443, "tls": true, "secret": "api"},
      {"host": "data.example.org", "port": 80, "methods": ["GET"], "paths": ["/v1/"]},
      {"host": "db.internal", "port": 5432, "allow_private": true}])"))
                  ->rules;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(airlock::fuzz::text(data, size));
  auto json = nlohmann::json::parse(body.empty() ? std::string("{}") : body, nullptr, false);
  if (json.is_discarded()) return 0;
  static const airlock::service::PolicyCaps kCaps = caps();
  auto request = airlock::service::parse_job_request(json, kCaps);
  if (!request) return 0;
  (void)airlock::validate::parse_checks(request->checks);

  // The engine's request: it no longer passes through `airlock run`'s option
  // parser, so what that parser refused must be refused by the service's.
  auto run = airlock::service::run_request_for(*request, {});
  AIRLOCK_CHECK(run.command == request->command && !run.command.empty() && !run.command[0].empty());
  const auto& got = run.policy;
  AIRLOCK_CHECK(got.timeout_ms > 0 && got.cpu_time_ms > 0);
  AIRLOCK_CHECK(got.memory_bytes >= (8ull << 20) && got.pids >= 4 && got.pids <= 1'000'000);
  AIRLOCK_CHECK(got.cpus >= 0.01 && got.cpus <= 1024);
  AIRLOCK_CHECK(got.allow.size() <= 64);
  for (const auto& [name, value] : got.env) AIRLOCK_CHECK(airlock::jobs::valid_env_name(name));
  return 0;
}
