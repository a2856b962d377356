#include "service/descriptor_budget.h"

#include <gtest/gtest.h>

namespace airlock::service {
namespace {

TEST(DescriptorBudget, ConnectionsGetWhatJobsAndSessionsLeave) {
  // The usual Linux default: 1024. Two running jobs, sixteen sessions.
  auto b = plan_descriptors(1024, 2, 16, 1024);
  EXPECT_EQ(b.reserved, kServiceDescriptors + 2 * kDescriptorsPerJob + 16 * kDescriptorsPerSession);
  EXPECT_EQ(b.max_connections, (1024 - b.reserved) / kDescriptorsPerConnection);
  EXPECT_TRUE(b.cramped);
  // Connections at their most, with jobs and sessions at theirs, stay under the limit.
  EXPECT_LE(b.reserved + b.max_connections * kDescriptorsPerConnection, 1024u);
}

TEST(DescriptorBudget, AHighLimitKeepsTheConfiguredCap) {
  auto b = plan_descriptors(1 << 20, 8, 16, 1024);
  EXPECT_EQ(b.max_connections, 1024u);
  EXPECT_FALSE(b.cramped);
}

TEST(DescriptorBudget, ALimitBelowTheReserveStillLetsAFewClientsIn) {
  auto b = plan_descriptors(128, 4, 16, 1024);
  EXPECT_EQ(b.max_connections, kMinConnections);
  EXPECT_TRUE(b.cramped);
  EXPECT_EQ(plan_descriptors(512, 2, 16, 1024).max_connections, (512 - 384) / kDescriptorsPerConnection);
}

TEST(DescriptorBudget, TheSessionsPreloadedInterpretersAreReservedToo) {
  auto without = plan_descriptors(1 << 20, 2, 16, 1024);
  auto with = plan_descriptors(1 << 20, 2, 16, 1024, 8);
  EXPECT_EQ(with.reserved, without.reserved + 8 * kDescriptorsPerInterpreter);
}

}  // namespace
}  // namespace airlock::service
