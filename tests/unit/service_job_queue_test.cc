#include "service/job_queue.h"

#include <gtest/gtest.h>

using airlock::service::JobQueue;

namespace {
size_t two(const std::string&) { return 2; }
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
  EXPECT_EQ(q.take(two)->job_id, "a2");
  // A is at its limit of 2: B's job goes first, then the global limit of 3 holds.
  EXPECT_EQ(q.take(two)->job_id, "b1");
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
