#include "service/job_queue.h"

#include <gtest/gtest.h>

using airlock::service::JobQueue;
using airlock::service::QueuedJob;
using airlock::service::TenantShare;

namespace {
TenantShare two(const std::string&) { return {2, 1}; }
TenantShare one(const std::string&) { return {1, 1}; }

// The ids take() hands out until it has none (each job ends as soon as it
// starts, so only the order is tested).
std::vector<std::string> drain(JobQueue& q, const std::function<TenantShare(const std::string&)>& share) {
  std::vector<std::string> order;
  while (auto j = q.take(share)) {
    order.push_back(j->job_id);
    q.finished(j->tenant_id);
  }
  return order;
}

// A job admitted at `ms` milliseconds of a fixed clock.
QueuedJob at(int ms, std::string id, std::string tenant) {
  return {std::move(id), std::move(tenant), std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms))};
}
}  // namespace

TEST(JobQueue, BoundedQueueAndTenantLimits) {
  JobQueue q(/*max_running=*/3, /*max_queued=*/4);
  EXPECT_FALSE(q.admit({"a1", "A"}, 2));
  EXPECT_FALSE(q.admit({"a2", "A"}, 2));
  auto third = q.admit({"a3", "A"}, 2);
  ASSERT_TRUE(third);
  EXPECT_NE(third->find("tenant"), std::string::npos);
  EXPECT_FALSE(q.admit({"b1", "B"}, 5));
  EXPECT_FALSE(q.admit({"b2", "B"}, 5));
  auto full = q.admit({"b3", "B"}, 5);
  ASSERT_TRUE(full);
  EXPECT_NE(full->find("queue is full"), std::string::npos);
  EXPECT_EQ(q.queued(), 4u);
}

TEST(JobQueue, TakesInOrderWithinRunningLimits) {
  JobQueue q(3, 10);
  for (auto id : {"a1", "a2", "a3"}) q.admit({id, "A"}, 10);
  q.admit({"b1", "B"}, 10);
  EXPECT_EQ(q.take(two)->job_id, "a1");
  // Tenants take turns (JobQueueFairness below), then A reaches its limit of 2
  // and the global limit of 3 holds.
  EXPECT_EQ(q.take(two)->job_id, "b1");
  EXPECT_EQ(q.take(two)->job_id, "a2");
  EXPECT_FALSE(q.take(two));
  q.finished("A");
  EXPECT_EQ(q.take(two)->job_id, "a3");
  EXPECT_EQ(q.running(), 3u);
  EXPECT_EQ(q.running_of("A"), 2u);
}

TEST(JobQueue, RemoveCancelsAQueuedJob) {
  JobQueue q(1, 10);
  q.admit({"a1", "A"}, 10);
  q.admit({"a2", "A"}, 10);
  EXPECT_TRUE(q.remove("a2"));
  EXPECT_FALSE(q.remove("a2"));
  EXPECT_FALSE(q.contains("a2"));
  EXPECT_EQ(q.queued_of("A"), 1u);
}

TEST(JobQueue, FinishingMoreThanTakenIsABrokenInvariant) {
  JobQueue q(1, 1);
  EXPECT_DEATH(q.finished("A"), "invariant");
}

// Issue 11 item 16: first come, first served let one tenant's queue delay
// everyone. Before the fix this order was a1..a5, then b1.
TEST(JobQueueFairness, ASingleJobOfAnotherTenantStartsNextBehindALongQueue) {
  JobQueue q(1, 64);
  for (int i = 1; i <= 5; ++i) ASSERT_FALSE(q.admit(at(i, "a" + std::to_string(i), "A"), 64));
  auto first = q.take(one);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->job_id, "a1");
  ASSERT_FALSE(q.admit(at(10, "b1", "B"), 64));  // B arrives while a1 runs
  q.finished("A");
  EXPECT_EQ(drain(q, one), (std::vector<std::string>{"b1", "a2", "a3", "a4", "a5"}));
}

TEST(JobQueueFairness, EqualTenantsAlternateWhateverTheOrderOfArrival) {
  JobQueue q(1, 64);
  int t = 0;
  for (auto id : {"a1", "a2", "a3", "a4"}) ASSERT_FALSE(q.admit(at(++t, id, "A"), 64));
  for (auto id : {"b1", "b2"}) ASSERT_FALSE(q.admit(at(++t, id, "B"), 64));
  for (auto id : {"c1", "c2"}) ASSERT_FALSE(q.admit(at(++t, id, "C"), 64));
  EXPECT_EQ(drain(q, one), (std::vector<std::string>{"a1", "b1", "c1", "a2", "b2", "c2", "a3", "a4"}));
}

TEST(JobQueueFairness, WeightsShareStartsInProportion) {
  JobQueue q(1, 64);
  int t = 0;
  for (int i = 1; i <= 6; ++i) ASSERT_FALSE(q.admit(at(++t, "a" + std::to_string(i), "A"), 64));
  for (int i = 1; i <= 6; ++i) ASSERT_FALSE(q.admit(at(++t, "b" + std::to_string(i), "B"), 64));
  auto weighted = [](const std::string& tenant) { return TenantShare{1, tenant == "A" ? 2u : 1u}; };
  auto order = drain(q, weighted);
  ASSERT_EQ(order.size(), 12u);
  // Of the first nine starts, A (weight 2) has six and B three.
  int a = 0;
  for (size_t i = 0; i < 9; ++i) a += order[i][0] == 'A' || order[i][0] == 'a';
  EXPECT_EQ(a, 6) << testing::PrintToString(order);
  // A weight of zero counts as one (and divides nothing by zero).
  JobQueue z(1, 64);
  ASSERT_FALSE(z.admit(at(1, "x1", "X"), 64));
  ASSERT_FALSE(z.admit(at(2, "x2", "X"), 64));
  ASSERT_FALSE(z.admit(at(3, "y1", "Y"), 64));
  EXPECT_EQ(drain(z, [](const std::string&) { return TenantShare{1, 0}; }),
            (std::vector<std::string>{"x1", "y1", "x2"}));
}

TEST(JobQueueFairness, ATenantThatComesAndGoesBanksNoCredit) {
  JobQueue q(1, 1000);
  int t = 0;
  // A runs alone for a long time; B was idle all along.
  for (int i = 0; i < 50; ++i) {
    ASSERT_FALSE(q.admit(at(++t, "a", "A"), 1000));
    auto j = q.take(one);
    ASSERT_TRUE(j);
    q.finished("A");
  }
  // Now both queue: B is served next, then they alternate; B's idle time
  // does not buy it fifty starts in a row.
  for (int i = 1; i <= 3; ++i) ASSERT_FALSE(q.admit(at(++t, "a" + std::to_string(i), "A"), 1000));
  for (int i = 1; i <= 3; ++i) ASSERT_FALSE(q.admit(at(++t, "b" + std::to_string(i), "B"), 1000));
  EXPECT_EQ(drain(q, one), (std::vector<std::string>{"b1", "a1", "b2", "a2", "b3", "a3"}));
  // B leaves (its queued job is cancelled), comes back later: still no burst.
  ASSERT_FALSE(q.admit(at(++t, "b4", "B"), 1000));
  EXPECT_TRUE(q.remove("b4"));
  for (int i = 4; i <= 6; ++i) ASSERT_FALSE(q.admit(at(++t, "a" + std::to_string(i), "A"), 1000));
  for (int i = 5; i <= 7; ++i) ASSERT_FALSE(q.admit(at(++t, "b" + std::to_string(i), "B"), 1000));
  auto order = drain(q, one);
  ASSERT_EQ(order.size(), 6u);
  for (size_t i = 0; i + 1 < order.size(); ++i)
    EXPECT_NE(order[i][0], order[i + 1][0]) << testing::PrintToString(order);
  EXPECT_EQ(q.queued(), 0u);
}

TEST(JobQueueFairness, ATenantAtItsRunningLimitLetsOthersThrough) {
  JobQueue q(3, 64);
  int t = 0;
  for (int i = 1; i <= 4; ++i) ASSERT_FALSE(q.admit(at(++t, "a" + std::to_string(i), "A"), 64));
  ASSERT_FALSE(q.admit(at(++t, "b1", "B"), 64));
  auto share = [](const std::string& tenant) { return TenantShare{tenant == "A" ? 1u : 2u, 1}; };
  EXPECT_EQ(q.take(share)->job_id, "a1");
  EXPECT_EQ(q.take(share)->job_id, "b1");
  EXPECT_FALSE(q.take(share));  // A is at its limit of one, B has nothing queued
  q.finished("A");
  EXPECT_EQ(q.take(share)->job_id, "a2");
}

// After a restart the jobs the store still shows as queued come back oldest
// first (Store::unfinished_jobs' order) and are scheduled as fairly as if the
// service had never stopped: within a tenant in the order they were created.
TEST(JobQueueFairness, RestoredJobsKeepTheirOrderWithinATenantAndAreInterleaved) {
  JobQueue q(1, 2);  // smaller than what is restored: restore() admits without limits
  const std::vector<std::pair<std::string, std::string>> stored = {
      {"a1", "A"}, {"a2", "A"}, {"a3", "A"}, {"a4", "A"}, {"b1", "B"}, {"a5", "A"}, {"c1", "C"}, {"b2", "B"}};
  int t = 0;
  for (const auto& [id, tenant] : stored) q.restore(at(++t, id, tenant));
  EXPECT_EQ(q.queued(), stored.size());
  EXPECT_EQ(drain(q, one), (std::vector<std::string>{"a1", "b1", "c1", "a2", "b2", "a3", "a4", "a5"}));
}

// Issue 11 item 16: two tenants could fill the global queue so a third got
// 429; one tenant alone could fill it up to its own cap.
TEST(JobQueueFairness, OthersCannotRefuseATenantsFirstJob) {
  JobQueue q(1, 4);
  ASSERT_FALSE(q.admit(at(1, "a1", "A"), 2));
  ASSERT_FALSE(q.admit(at(2, "a2", "A"), 2));
  auto capped = q.admit(at(3, "a3", "A"), 2);
  ASSERT_TRUE(capped);
  EXPECT_NE(capped->find("its cap (tenant_max_queued 2)"), std::string::npos) << *capped;
  ASSERT_FALSE(q.admit(at(4, "b1", "B"), 2));
  ASSERT_FALSE(q.admit(at(5, "b2", "B"), 2));
  EXPECT_EQ(q.queued(), 4u);  // full
  EXPECT_FALSE(q.admit(at(6, "c1", "C"), 2)) << "C's first job is refused by a queue others filled";
  auto full = q.admit(at(7, "c2", "C"), 2);
  ASSERT_TRUE(full);
  EXPECT_NE(full->find("queue is full"), std::string::npos) << *full;
  EXPECT_EQ(q.queued(), 5u);
}
