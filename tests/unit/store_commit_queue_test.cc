// The group commit queue alone (no SQLite): who commits what, in which
// batches, and whose result each writer gets.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/commit_queue.h"

namespace airlock::store {
namespace {

// Waits (up to 10 s) until `n` writes wait in the queue.
void wait_queued(const CommitQueue& q, size_t n) {
  for (int i = 0; i < 1000 && q.stats().queued < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(q.stats().queued, n);
}

// A commit function that records each batch and can be held closed, so that
// writers pile up behind the batch in progress.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int inside = 0;  // commits that have started (the first one blocks while closed)
  std::vector<size_t> batches;  // the size of each batch

  CommitQueue::Commit commit() {
    return [this](const std::vector<CommitQueue::Write*>& batch) {
      std::unique_lock lock(mu);
      ++inside;
      cv.notify_all();
      cv.wait(lock, [&] { return open; });
      for (auto* w : batch) w->result = w->apply();
      batches.push_back(batch.size());
    };
  }
};

TEST(StoreCommitQueue, ALoneWriteCommitsAtOnceInABatchOfItsOwn) {
  Recorder rec;
  CommitQueue q(64, rec.commit());
  bool ran = false;
  CommitQueue::Write w;
  w.apply = [&]() -> Status { ran = true; return {}; };
  EXPECT_TRUE(q.submit(w));
  EXPECT_TRUE(ran);
  EXPECT_EQ(q.stats().batches, 1u);
  EXPECT_EQ(q.stats().largest, 1u);
}

// Writers that arrive while one commit is in progress share the next one, in
// the order they queued, and never more than max_batch at once.
TEST(StoreCommitQueue, WritersQueuedBehindACommitShareBatchesOfAtMostMaxBatch) {
  Recorder rec;
  rec.open = false;
  CommitQueue q(4, rec.commit());
  std::mutex order_mu;
  std::vector<int> applied;  // the order writes were applied in
  auto writer = [&](int tag) {
    CommitQueue::Write w;
    w.apply = [&, tag]() -> Status {
      std::lock_guard lock(order_mu);
      applied.push_back(tag);
      return {};
    };
    EXPECT_TRUE(q.submit(w));
  };
  std::thread first(writer, 0);
  {
    std::unique_lock lock(rec.mu);
    rec.cv.wait(lock, [&] { return rec.inside == 1; });  // the first batch is held open
  }
  // Ten more queue behind it.
  std::vector<std::thread> rest;
  for (int i = 1; i <= 10; ++i) rest.emplace_back(writer, i);
  wait_queued(q, 10);
  {
    std::lock_guard lock(rec.mu);
    rec.open = true;
  }
  rec.cv.notify_all();
  first.join();
  for (auto& t : rest) t.join();

  auto stats = q.stats();
  EXPECT_EQ(stats.writes, 11u);
  EXPECT_LE(stats.largest, 4u);
  // 1 + 10 queued writes in batches of at most 4: exactly 1 + 3 batches.
  EXPECT_EQ(stats.batches, 4u);
  ASSERT_EQ(applied.size(), 11u);
  EXPECT_EQ(applied[0], 0);
  EXPECT_EQ(rec.batches, (std::vector<size_t>{1, 4, 4, 2}));
}

// A refused write gets its own error; the others of its batch succeed.
TEST(StoreCommitQueue, EachWriterGetsItsOwnResult) {
  Recorder rec;
  rec.open = false;
  CommitQueue q(64, rec.commit());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, refused{0};
  std::thread first([&] {
    CommitQueue::Write w;
    w.apply = []() -> Status { return {}; };
    if (q.submit(w)) ++ok;
  });
  {
    std::unique_lock lock(rec.mu);
    rec.cv.wait(lock, [&] { return rec.inside == 1; });
  }
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      CommitQueue::Write w;
      w.apply = [i]() -> Status {
        if (i == 3) return fail("write 3 is refused");
        return {};
      };
      auto st = q.submit(w);
      if (st) ++ok;
      else if (st.error().what == "write 3 is refused") ++refused;
    });
  wait_queued(q, 8);
  {
    std::lock_guard lock(rec.mu);
    rec.open = true;
  }
  rec.cv.notify_all();
  first.join();
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(q.stats().batches, 2u);  // the held one, then the eight together
  EXPECT_EQ(q.stats().largest, 8u);
}

}  // namespace
}  // namespace airlock::store
