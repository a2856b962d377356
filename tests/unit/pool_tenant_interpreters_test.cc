#include <gtest/gtest.h>

#include "pool/tenant_interpreters.h"

namespace airlock::jobs {
namespace {

using Names = std::vector<std::string>;

TEST(TenantLru, TheLeastRecentlyUsedTenantGivesWayBeyondTheCap) {
  TenantLru lru(2);
  EXPECT_EQ(lru.touch("a"), Names{});
  EXPECT_EQ(lru.touch("b"), Names{});
  EXPECT_EQ(lru.touch("a"), Names{});  // a is the most recent again
  EXPECT_EQ(lru.touch("c"), Names{"b"});
  EXPECT_TRUE(lru.holds("a"));
  EXPECT_FALSE(lru.holds("b"));
  EXPECT_EQ(lru.order(), (std::deque<std::string>{"c", "a"}));
  EXPECT_EQ(lru.touch("b"), Names{"a"});  // back, as a newcomer
}

TEST(TenantLru, ACapOfZeroStillHoldsOneTenant) {
  TenantLru lru(0);
  EXPECT_EQ(lru.touch("a"), Names{});
  EXPECT_EQ(lru.touch("b"), Names{"a"});
  EXPECT_TRUE(lru.holds("b"));
}

TEST(TenantInterpreterRenewal, AfterNSandboxesAFreshInterpreterAndZeroMeansNever) {
  EXPECT_FALSE(needs_renewal(0, 3));
  EXPECT_FALSE(needs_renewal(2, 3));
  EXPECT_TRUE(needs_renewal(3, 3));
  EXPECT_TRUE(needs_renewal(4, 3));
  EXPECT_FALSE(needs_renewal(1'000'000, 0));
  EXPECT_TRUE(needs_renewal(1, 1));  // every sandbox from a fresh interpreter
}

TEST(TenantInterpreterRenewal, ASuccessorStartsATenthAheadAndNeverWithoutRenewal) {
  EXPECT_FALSE(starts_ahead(89, 100));
  EXPECT_TRUE(starts_ahead(90, 100));  // ten sandboxes before the renewal
  EXPECT_FALSE(starts_ahead(1, 3));
  EXPECT_TRUE(starts_ahead(2, 3));   // at least one before
  EXPECT_FALSE(starts_ahead(5, 0));  // never renewed
  EXPECT_FALSE(starts_ahead(1, 1));  // a fresh one per sandbox: the renewal itself starts it
}

}  // namespace
}  // namespace airlock::jobs
