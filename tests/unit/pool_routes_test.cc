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

}  // namespace
