// GET /v1/pools's answer (src/api/pool_routes.cc), built without a server.
#include "api/pool_routes.h"

#include <gtest/gtest.h>

namespace {

using airlock::service::pools_json;
using airlock::service::PoolStatus;

TEST(UiPools, NoPoolConfigured) {
  auto j = pools_json(PoolStatus{}, false);
  EXPECT_EQ(j["warm"], 0);
  EXPECT_EQ(j["preloaded"], 0);
  EXPECT_TRUE(j["images"].empty());
  EXPECT_EQ(j["process"], "none");
}

TEST(UiPools, ARunningAndADeadPoolAreTold) {
  PoolStatus p{2, 1, {"python-data"}, [] { return true; }};
  auto up = pools_json(p, true);
  EXPECT_EQ(up["warm"], 2);
  EXPECT_EQ(up["preloaded"], 1);
  EXPECT_EQ(up["images"], nlohmann::json::array({"python-data"}));
  EXPECT_EQ(up["process"], "running");
  EXPECT_EQ(pools_json(p, false)["process"], "stopped");
}

TEST(UiPools, InterpretersAreTotalledWithoutNamingATenant) {
  nlohmann::json jobs = nlohmann::json::array(
      {{{"tenant", "t1"}, {"kind", "data"}, {"pss_bytes", 40}, {"retired", false}},
       {{"tenant", "t1"}, {"kind", "stdlib"}, {"pss_bytes", 7}, {"retired", false}},
       {{"tenant", "t2"}, {"kind", "data"}, {"pss_bytes", 41}, {"retired", false}},
       {{"tenant", "t2"}, {"kind", "data"}, {"pss_bytes", 5}, {"ahead", true}, {"retired", false}},
       {{"pid", 12}, {"pss_bytes", 30}, {"retired", true}}});
  auto j = pools_json(PoolStatus{}, false, {{"jobs", jobs}, {"sessions", nlohmann::json::array()}});
  EXPECT_EQ(j["interpreters"]["jobs"],
            (nlohmann::json{{"count", 3}, {"ahead", 1}, {"retired", 1}, {"tenants", 2}, {"pss_bytes", 123}}));
  EXPECT_EQ(j["interpreters"]["sessions"]["count"], 0);
  EXPECT_EQ(j.dump().find("t1"), std::string::npos);
  EXPECT_FALSE(pools_json(PoolStatus{}, false).contains("interpreters"));
}

}  // namespace
