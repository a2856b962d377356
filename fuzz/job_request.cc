// POST /v1/jobs bodies as the service takes them (src/service/route_helpers.cc
// json_body, then parse_job_request and parse_checks), and the property the
// service relies on: the `airlock run` arguments built from an accepted
// request parse back (parse_run_args) to the same command and policy.
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

  auto args = airlock::service::airlock_run_args(*request, {"/work/in/a.csv"}, "/work/out",
                                                 "/work/record.json", "/var/lib/airlock");
  AIRLOCK_CHECK(!args.empty() && args[0] == "run");
  auto run = airlock::jobs::parse_run_args({args.begin() + 1, args.end()});
  AIRLOCK_CHECK(run.has_value());
  const auto& want = request->policy;
  const auto& got = run->policy;
  AIRLOCK_CHECK(run->command == request->command);
  AIRLOCK_CHECK(got.timeout_ms == want.timeout_ms && got.cpu_time_ms == want.cpu_time_ms);
  AIRLOCK_CHECK(got.memory_bytes == want.memory_bytes && got.pids == want.pids);
  AIRLOCK_CHECK(std::fabs(got.cpus - want.cpus) < 1e-5);
  AIRLOCK_CHECK(got.env == want.env);
  AIRLOCK_CHECK(got.allow.size() == want.allow.size());
  for (size_t i = 0; i < got.allow.size(); ++i) {
    AIRLOCK_CHECK(airlock::egress::rule_json(got.allow[i]) ==
                  airlock::egress::rule_json(want.allow[i]));
  }
  return 0;
}
