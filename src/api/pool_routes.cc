#include "api/pool_routes.h"

#include "api/route_helpers.h"

namespace airlock::service {

nlohmann::json pools_json(const PoolStatus& pools, bool running) {
  const char* process = !pools.running ? "none" : running ? "running" : "stopped";
  return {{"warm", pools.warm},
          {"preloaded", pools.preloaded},
          {"images", pools.images},
          {"process", process}};
}

void install_pool_routes(api::HttpServer& server, JobService& service, PoolStatus pools) {
  add(server, service, "GET", "/v1/pools",
      [&service, pools](const ExchangePtr& ex, const Caller& c) {
        if (auto no = c.lacks({"read", "admin"})) return answer(service, ex, from_error(*no));
        answer(service, ex,
               api::HttpResponse::json(200, pools_json(pools, pools.running && pools.running())));
      });
}

}  // namespace airlock::service
