#include <gtest/gtest.h>

#include "service/config.h"

namespace airlock::service {
namespace {

TEST(ServiceConfigPreload, PerTenantInterpreterKeysHaveDefaultsAndBounds) {
  auto defaults = parse_config("");
  ASSERT_TRUE(defaults) << defaults.error().message();
  EXPECT_EQ(defaults->preloaded_tenants, 8u);
  EXPECT_EQ(defaults->preloaded_renew_jobs, 100u);

  auto set = parse_config("preloaded_tenants = 2\npreloaded_renew_jobs = 0\n");
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->preloaded_tenants, 2u);
  EXPECT_EQ(set->preloaded_renew_jobs, 0u);  // never renewed

  for (const char* bad : {"preloaded_tenants = 0\n", "preloaded_tenants = 5000\n",
                          "preloaded_renew_jobs = 2000000\n", "preloaded_renew_jobs = -1\n"}) {
    auto refused = parse_config(bad);
    EXPECT_FALSE(refused) << bad;
    if (!refused) {
      EXPECT_NE(refused.error().message().find("preloaded_"), std::string::npos)
          << refused.error().message();
    }
  }
}

}  // namespace
}  // namespace airlock::service
