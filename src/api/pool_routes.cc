#include "api/pool_routes.h"

#include <set>

#include "api/route_helpers.h"

namespace airlock::service {

nlohmann::json pools_json(const PoolStatus& pools, bool running,
                          const nlohmann::json& interpreters) {
  const char* process = !pools.running ? "none" : running ? "running" : "stopped";
  nlohmann::json out = {{"warm", pools.warm},
                        {"preloaded", pools.preloaded},
                        {"images", pools.images},
                        {"process", process}};
  if (interpreters.is_object()) {
    nlohmann::json totals = nlohmann::json::object();
    for (const auto& [where, stats] : interpreters.items())
      totals[where] = interpreter_totals(stats);
    out["interpreters"] = std::move(totals);
  }
  return out;
}

nlohmann::json interpreter_totals(const nlohmann::json& stats) {
  uint64_t count = 0, retired = 0, ahead = 0, pss = 0;
  std::set<std::string> tenants;
  if (stats.is_array())
    for (const auto& i : stats) {
      if (!i.is_object()) continue;
      if (i.value("retired", false)) {
        ++retired;
      } else if (i.value("ahead", false)) {
        ++ahead;
      } else {
        ++count;
        tenants.insert(i.value("tenant", ""));
      }
      pss += i.value("pss_bytes", uint64_t{0});
    }
  return {{"count", count},
          {"ahead", ahead},
          {"retired", retired},
          {"tenants", tenants.size()},
          {"pss_bytes", pss}};
}

void install_pool_routes(api::HttpServer& server, JobService& service, PoolStatus pools) {
  add(server, service, "GET", "/v1/pools",
      [&service, pools](const ExchangePtr& ex, const Caller& c) {
        if (auto no = c.lacks({"read", "admin"})) return answer(service, ex, from_error(*no));
        nlohmann::json interpreters =
            pools.interpreters ? pools.interpreters() : nlohmann::json(nullptr);
        answer(service, ex,
               api::HttpResponse::json(
                   200, pools_json(pools, pools.running && pools.running(), interpreters)));
      });
}

}  // namespace airlock::service
