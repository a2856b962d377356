// Store as the cluster's queue (issue 17), on both backends: claims (one
// winner however many stores race), tenant limits and order, warm placement,
// nodes, leases and what a lost node leaves, cancel requests, the migration
// from schema 3, and the notifier.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/record.h"
#include "store/notifier.h"
#include "store/postgres.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"
#include "usage/ledger.h"

namespace airlock::store {
namespace {

using testing::TempDir;

const int64_t kBase = *usage::parse_time_ms("2026-01-01T00:00:00.000Z");

// The RFC 3339 time `ms` milliseconds after kBase.
std::string ts(int64_t ms) {
  return jobs::rfc3339(std::chrono::system_clock::time_point(std::chrono::milliseconds(kBase + ms)));
}

class StoreClaims : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path(), store_, options_);
    TenantLimits roomy;
    roomy.max_running = 1000;
    a_ = store_->create_tenant("acme", roomy)->id;
  }

  // Another store on the same database: another node.
  std::unique_ptr<Store> second_store() {
    auto s = Store::open(tmp_.path(), options_);
    EXPECT_TRUE(s) << s.error().message();
    return s ? std::move(*s) : nullptr;
  }

  JobRow new_job(const std::string& tenant, int64_t created_ms, const std::string& image = "") {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k1";
    row.request_json = R"({"command":["true"]})";
    row.created_at = ts(created_ms);
    row.image = image;
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    return created ? created->first : JobRow{};
  }

  void up(Store& s, const std::string& id, int slots = 4, std::vector<std::string> warm = {},
          int64_t heartbeat_ms = 0) {
    NodeRow n;
    n.id = id;
    n.role = "worker";
    n.address = "10.0.0.1:8080";
    n.slots = slots;
    n.session_slots = 2;
    n.warm_images = std::move(warm);
    n.started_at = ts(heartbeat_ms);
    auto r = s.register_node(n);
    ASSERT_TRUE(r) << r.error().message();
  }

  Result<std::optional<JobRow>> claim(Store& s, const std::string& node, int64_t now_ms,
                                      std::vector<std::string> warm = {}) {
    ClaimOptions o;
    o.node_id = node;
    o.now = ts(now_ms);
    o.warm_images = std::move(warm);
    return s.claim_job(o);
  }

  std::string record_json(const std::string& id, const std::string& outcome) {
    return nlohmann::json{{"id", id}, {"outcome", outcome}}.dump();
  }

  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string a_;
};

TEST_P(StoreClaims, OneJobRacedByTwoStoresIsClaimedByExactlyOne) {
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "n1");
  up(*other, "n2");
  for (int round = 0; round < 20; ++round) {
    JobRow job = new_job(a_, round);
    std::atomic<int> go{0};
    std::optional<JobRow> got1, got2;
    auto race = [&](Store& s, const char* node, std::optional<JobRow>& out) {
      go.fetch_add(1);
      while (go.load() < 2) {
      }
      auto c = claim(s, node, 100000);
      ASSERT_TRUE(c) << c.error().message();
      out = *c;
    };
    std::thread t1(race, std::ref(*store_), "n1", std::ref(got1));
    std::thread t2(race, std::ref(*other), "n2", std::ref(got2));
    t1.join();
    t2.join();
    ASSERT_NE(got1.has_value(), got2.has_value()) << "round " << round;
    const JobRow& won = got1 ? *got1 : *got2;
    EXPECT_EQ(won.id, job.id);
    EXPECT_EQ(won.node_id, got1 ? "n1" : "n2");
    EXPECT_EQ(won.state, JobState::kQueued);  // claimed, not started
    EXPECT_EQ(won.claimed_at, ts(100000));
    // The loser cannot start it either.
    auto stolen = (got1 ? *other : *store_).mark_running(job.id, 1, ts(100001), got1 ? "n2" : "n1");
    ASSERT_FALSE(stolen);
    EXPECT_EQ(stolen.error().kind, ErrorKind::kRefused);
    ASSERT_TRUE(store_->finish_job(job.id, "succeeded", ts(100002), record_json(job.id, "succeeded"), {}));
  }
}

TEST_P(StoreClaims, TwoHundredJobsByFourThreadsOnTwoStoresAreEachClaimedOnce) {
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "n1", 100);
  up(*other, "n2", 100);
  std::set<std::string> created;
  for (int i = 0; i < 200; ++i) created.insert(new_job(a_, i).id);
  std::mutex mu;
  std::map<std::string, int> claims;
  std::atomic<bool> failed{false};
  auto worker = [&](Store& s, std::string node) {
    while (true) {
      auto c = claim(s, node, 1000000);
      if (!c) {
        ADD_FAILURE() << c.error().message();
        failed = true;
        return;
      }
      if (!*c) {
        // Nothing claimed must mean nothing queued, not "another node was
        // claiming for this tenant" (jobs are never added back here).
        auto left = s.queue_counts("");
        ASSERT_TRUE(left);
        EXPECT_EQ(left->queued, 0) << node << " found nothing while jobs were queued";
        return;
      }
      auto run = s.mark_running((*c)->id, 1, ts(1000001), node);
      if (!run) {
        ADD_FAILURE() << run.error().message();
        failed = true;
        return;
      }
      std::lock_guard lock(mu);
      ++claims[(*c)->id];
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(worker, std::ref(*store_), "n1");
  threads.emplace_back(worker, std::ref(*store_), "n1");
  threads.emplace_back(worker, std::ref(*other), "n2");
  threads.emplace_back(worker, std::ref(*other), "n2");
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  EXPECT_EQ(claims.size(), 200u);
  for (const auto& [id, n] : claims) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_TRUE(created.contains(id)) << id;
  }
  auto counts = store_->queue_counts("");
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->queued, 0);
  EXPECT_EQ(counts->claimed, 0);
  EXPECT_EQ(counts->running, 200);
}

TEST_P(StoreClaims, TenantMaxRunningCountsClaimedAndRunningJobs) {
  TenantLimits two;
  two.max_running = 2;
  std::string t = store_->create_tenant("small", two)->id;
  up(*store_, "n1");
  std::vector<JobRow> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(new_job(t, i));
  auto c1 = claim(*store_, "n1", 10000);
  auto c2 = claim(*store_, "n1", 10000);
  ASSERT_TRUE(c1 && *c1 && c2 && *c2);
  EXPECT_EQ((*c1)->id, jobs[0].id);  // oldest first
  EXPECT_EQ((*c2)->id, jobs[1].id);
  auto c3 = claim(*store_, "n1", 10000);
  ASSERT_TRUE(c3);
  EXPECT_FALSE(*c3) << "a third claim while two are claimed: " << (*c3)->id;
  ASSERT_TRUE(store_->mark_running(jobs[0].id, 7, ts(10001), "n1"));
  auto c4 = claim(*store_, "n1", 10002);
  ASSERT_TRUE(c4);
  EXPECT_FALSE(*c4) << "one running and one claimed are two";
  ASSERT_TRUE(store_->finish_job(jobs[0].id, "succeeded", ts(10003), record_json(jobs[0].id, "succeeded"), {}));
  auto c5 = claim(*store_, "n1", 10004);
  ASSERT_TRUE(c5 && *c5);
  EXPECT_EQ((*c5)->id, jobs[2].id);
  auto counts = store_->queue_counts(t);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->queued, 2);
  EXPECT_EQ(counts->claimed, 2);
  EXPECT_EQ(counts->running, 0);
  auto all = store_->queue_counts("");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->queued, 2);
}

TEST_P(StoreClaims, TenantMaxRunningHoldsUnderRacingStores) {
  // Four threads on two stores claim for one tenant limited to 3 and never
  // finish: the claims they get together must be exactly 3.
  TenantLimits three;
  three.max_running = 3;
  std::string t = store_->create_tenant("limited", three)->id;
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "n1", 100);
  up(*other, "n2", 100);
  for (int i = 0; i < 40; ++i) new_job(t, i);
  std::atomic<int> got{0}, ready{0};
  auto worker = [&](Store& s, std::string node) {
    ready.fetch_add(1);
    while (ready.load() < 4) {
    }
    for (int i = 0; i < 20; ++i) {
      auto c = claim(s, node, 1000000);
      ASSERT_TRUE(c) << c.error().message();
      if (*c) got.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(worker, std::ref(*store_), "n1");
  threads.emplace_back(worker, std::ref(*store_), "n1");
  threads.emplace_back(worker, std::ref(*other), "n2");
  threads.emplace_back(worker, std::ref(*other), "n2");
  for (auto& th : threads) th.join();
  EXPECT_EQ(got.load(), 3);
  auto counts = store_->queue_counts(t);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->claimed, 3);
  EXPECT_EQ(counts->queued, 37);
}

TEST_P(StoreClaims, TheTenantWithFewestRunningGoesFirstThenTheOldestJob) {
  std::string b = store_->create_tenant("globex", TenantLimits{.max_running = 1000})->id;
  up(*store_, "n1");
  JobRow a1 = new_job(a_, 1), a2 = new_job(a_, 2), a3 = new_job(a_, 3);
  JobRow b1 = new_job(b, 10), b2 = new_job(b, 11);
  // Both at 0: the oldest job, a1; then acme has 1, globex 0: b1; then 1 and 1: a2.
  std::vector<std::string> order;
  for (int i = 0; i < 5; ++i) {
    auto c = claim(*store_, "n1", 20000);
    ASSERT_TRUE(c && *c);
    order.push_back((*c)->id);
  }
  EXPECT_EQ(order, (std::vector<std::string>{a1.id, b1.id, a2.id, b2.id, a3.id}));
}

TEST_P(StoreClaims, AJobIsLeftToTheNodeWithItsImageWarmForPreferWarmMs) {
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "cold", 4);
  up(*other, "warm", 4, {"python:3.12"});
  JobRow j = new_job(a_, 1000, "python:3.12@sha256:" + std::string(64, 'a'));
  // 50 ms after it was created: the cold node leaves it (200 ms is the default).
  auto early = claim(*store_, "cold", 1050);
  ASSERT_TRUE(early);
  EXPECT_FALSE(*early) << "the cold node took a job another node has warm";
  // A job of another image is not held back.
  JobRow plain = new_job(a_, 1001, "node:22");
  auto other_image = claim(*store_, "cold", 1051);
  ASSERT_TRUE(other_image && *other_image);
  EXPECT_EQ((*other_image)->id, plain.id);
  // The warm node gets it at once.
  auto warm = claim(*other, "warm", 1060, {"python:3.12"});
  ASSERT_TRUE(warm && *warm);
  EXPECT_EQ((*warm)->id, j.id);

  // After prefer_warm_ms the cold node takes one.
  JobRow late = new_job(a_, 2000, "python:3.12");
  auto waited = claim(*store_, "cold", 2000 + 200);
  ASSERT_TRUE(waited && *waited);
  EXPECT_EQ((*waited)->id, late.id);

  // A warm node with no free slot holds nothing back.
  Heartbeat full{.node_id = "warm", .state = "up", .running = 4, .sessions = 0,
                 .warm_images = {"python:3.12"}, .now = ts(3000)};
  ASSERT_TRUE(other->heartbeat(full));
  JobRow busy = new_job(a_, 3000, "python:3.12");
  auto taken = claim(*store_, "cold", 3010);
  ASSERT_TRUE(taken && *taken);
  EXPECT_EQ((*taken)->id, busy.id);
}

TEST_P(StoreClaims, ALostNodesClaimsAreRequeuedAndItsStartedJobsAndSessionsReturned) {
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "n1", 4, {}, 0);
  up(*other, "n2", 4, {}, 0);
  JobRow started = new_job(a_, 1), claimed = new_job(a_, 2), untouched = new_job(a_, 3);
  ASSERT_TRUE(*claim(*store_, "n1", 100));
  ASSERT_TRUE(*claim(*store_, "n1", 100));
  ASSERT_TRUE(store_->mark_running(started.id, 42, ts(150), "n1"));
  SessionRow session{.id = "s1", .tenant_id = a_, .key_id = "k1", .request_json = "{}", .created_at = ts(160)};
  session.node_id = "n1";
  ASSERT_TRUE(store_->create_session(session));
  // n2 keeps beating; n1 stops at 0.
  ASSERT_TRUE(other->heartbeat(Heartbeat{.node_id = "n2", .state = "up", .now = ts(9000)}));

  // Within the lease: nobody is lost.
  auto none = other->declare_lost_nodes(ts(10000), 10000);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_TRUE(none->empty());

  auto lost = other->declare_lost_nodes(ts(10001), 10000);
  ASSERT_TRUE(lost) << lost.error().message();
  ASSERT_EQ(lost->size(), 1u);
  const LostNode& n1 = (*lost)[0];
  EXPECT_EQ(n1.node.id, "n1");
  EXPECT_EQ(n1.node.state, "lost");
  EXPECT_EQ(n1.node.lost_at, ts(10001));
  EXPECT_EQ(n1.requeued, 1u);
  ASSERT_EQ(n1.started_jobs.size(), 1u);
  EXPECT_EQ(n1.started_jobs[0].id, started.id);
  EXPECT_EQ(n1.started_jobs[0].pid, 42);
  ASSERT_EQ(n1.open_sessions.size(), 1u);
  EXPECT_EQ(n1.open_sessions[0].id, "s1");
  EXPECT_EQ(n1.open_sessions[0].node_id, "n1");

  auto row = store_->job(a_, claimed.id);
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->node_id, "");
  EXPECT_EQ((*row)->claimed_at, "");
  EXPECT_EQ((*row)->state, JobState::kQueued);

  // The lost node may not beat, claim, or start what it had claimed.
  auto beat = store_->heartbeat(Heartbeat{.node_id = "n1", .state = "up", .now = ts(10002)});
  ASSERT_FALSE(beat);
  EXPECT_EQ(beat.error().kind, ErrorKind::kRefused);
  auto refused_claim = claim(*store_, "n1", 10002);
  ASSERT_FALSE(refused_claim);
  EXPECT_EQ(refused_claim.error().kind, ErrorKind::kRefused);
  auto refused_start = store_->mark_running(claimed.id, 43, ts(10003), "n1");
  ASSERT_FALSE(refused_start);
  EXPECT_EQ(refused_start.error().kind, ErrorKind::kRefused);

  // n2 gets the requeued job (older than the untouched one).
  auto c = claim(*other, "n2", 10004);
  ASSERT_TRUE(c && *c);
  EXPECT_EQ((*c)->id, claimed.id);
  auto c2 = claim(*other, "n2", 10004);
  ASSERT_TRUE(c2 && *c2);
  EXPECT_EQ((*c2)->id, untouched.id);

  // Declared once: a later sweep finds nothing.
  auto again = store_->declare_lost_nodes(ts(20000), 10000);
  ASSERT_TRUE(again);
  for (const auto& l : *again) EXPECT_NE(l.node.id, "n1");
  auto node = store_->node("n1");
  ASSERT_TRUE(node && *node);
  EXPECT_EQ((*node)->state, "lost");
}

TEST_P(StoreClaims, RacingSweepersDeclareEachLostNodeExactlyOnce) {
  auto other = second_store();
  ASSERT_TRUE(other);
  for (int i = 0; i < 12; ++i) up(*store_, "w" + std::to_string(i), 4, {}, 0);
  std::vector<JobRow> jobs;
  for (int i = 0; i < 12; ++i) {
    jobs.push_back(new_job(a_, i));
    ASSERT_TRUE(*claim(*store_, "w" + std::to_string(i), 100));
  }
  std::mutex mu;
  std::map<std::string, int> declared;
  size_t requeued = 0;
  std::atomic<int> ready{0};
  auto sweep = [&](Store& s) {
    ready.fetch_add(1);
    while (ready.load() < 4) {
    }
    auto lost = s.declare_lost_nodes(ts(60000), 10000);
    ASSERT_TRUE(lost) << lost.error().message();
    std::lock_guard lock(mu);
    for (const auto& l : *lost) {
      ++declared[l.node.id];
      requeued += l.requeued;
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(sweep, std::ref(*store_));
  threads.emplace_back(sweep, std::ref(*store_));
  threads.emplace_back(sweep, std::ref(*other));
  threads.emplace_back(sweep, std::ref(*other));
  for (auto& t : threads) t.join();
  EXPECT_EQ(declared.size(), 12u);
  for (const auto& [id, n] : declared) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(requeued, 12u);
  auto counts = store_->queue_counts(a_);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->queued, 12);
  EXPECT_EQ(counts->claimed, 0);
}

TEST_P(StoreClaims, ReRegisteringReturnsWhatThePreviousLifeLeft) {
  up(*store_, "n1", 4, {}, 0);
  JobRow started = new_job(a_, 1), claimed = new_job(a_, 2);
  ASSERT_TRUE(*claim(*store_, "n1", 100));
  ASSERT_TRUE(*claim(*store_, "n1", 100));
  ASSERT_TRUE(store_->mark_running(started.id, 9, ts(110), "n1"));
  ASSERT_TRUE(store_->heartbeat(Heartbeat{.node_id = "n1", .state = "up", .running = 1, .now = ts(200)}));

  // The process restarts (SIGKILL, no sweep yet) and registers again.
  NodeRow again{.id = "n1", .role = "worker", .address = "10.0.0.9:8080", .slots = 8, .started_at = ts(300)};
  auto prev = store_->register_node(again);
  ASSERT_TRUE(prev) << prev.error().message();
  EXPECT_EQ(prev->node.started_at, ts(0));  // the previous life
  EXPECT_EQ(prev->node.heartbeat_at, ts(200));
  EXPECT_EQ(prev->requeued, 1u);
  ASSERT_EQ(prev->started_jobs.size(), 1u);
  EXPECT_EQ(prev->started_jobs[0].id, started.id);

  auto now = store_->node("n1");
  ASSERT_TRUE(now && *now);
  EXPECT_EQ((*now)->state, "up");
  EXPECT_EQ((*now)->slots, 8);
  EXPECT_EQ((*now)->address, "10.0.0.9:8080");
  EXPECT_EQ((*now)->running, 0);
  EXPECT_EQ((*now)->heartbeat_at, ts(300));

  // A lost node registers again and beats again.
  ASSERT_TRUE(store_->declare_lost_nodes(ts(100000), 10000));
  EXPECT_EQ((*store_->node("n1"))->state, "lost");
  auto back = store_->register_node(NodeRow{.id = "n1", .role = "worker", .address = "a", .slots = 1,
                                            .started_at = ts(100001)});
  ASSERT_TRUE(back);
  EXPECT_EQ(back->node.state, "lost");
  EXPECT_TRUE(store_->heartbeat(Heartbeat{.node_id = "n1", .state = "up", .now = ts(100002)}));
  auto first = store_->register_node(NodeRow{.id = "fresh", .role = "worker", .address = "b", .slots = 1});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->requeued, 0u);
  EXPECT_TRUE(first->started_jobs.empty());
  auto all = store_->nodes();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "fresh");
  EXPECT_EQ((*all)[1].id, "n1");
}

TEST_P(StoreClaims, AWorkersFinishAfterTheSweepersIsRefusedAndWritesNothing) {
  auto sweeper = second_store();
  ASSERT_TRUE(sweeper);
  up(*store_, "n1", 4, {}, 0);
  JobRow j = new_job(a_, 1);
  ASSERT_TRUE(*claim(*store_, "n1", 100));
  ASSERT_TRUE(store_->mark_running(j.id, 5, ts(110), "n1"));
  auto lost = sweeper->declare_lost_nodes(ts(50000), 10000);
  ASSERT_TRUE(lost && lost->size() == 1u);
  ASSERT_EQ((*lost)[0].started_jobs.size(), 1u);
  auto ended = sweeper->finish_job(j.id, "sandbox_error", ts(50001),
                                   record_json(j.id, "sandbox_error"), {});
  ASSERT_TRUE(ended) << ended.error().message();

  // The worker was only cut off: it finishes the job with an artifact.
  ArtifactRow art{.job_id = j.id, .name = "out.txt", .sha256 = std::string(64, 'b'), .type = "text/plain", .size = 3};
  auto late = store_->finish_job(j.id, "succeeded", ts(50002), record_json(j.id, "succeeded"), {art});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, ErrorKind::kRefused) << late.error().message();
  auto row = store_->job(a_, j.id);
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->outcome, "sandbox_error");
  EXPECT_EQ((*row)->finished_at, ts(50001));
  auto rec = store_->record(a_, j.id);
  ASSERT_TRUE(rec && *rec);
  EXPECT_EQ((*rec)->hash, ended->hash);
  EXPECT_EQ((*rec)->seq, 1);
  auto arts = store_->artifacts(j.id);
  ASSERT_TRUE(arts);
  EXPECT_TRUE(arts->empty());
  auto heads = store_->chain_heads();
  ASSERT_TRUE(heads);
  EXPECT_EQ((*heads)[a_].seq, 1);
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok);
}

TEST_P(StoreClaims, ACancelOfAClaimedJobReachesItsNodesHeartbeat) {
  up(*store_, "n1");
  JobRow claimed = new_job(a_, 1), queued = new_job(a_, 2);
  ASSERT_TRUE(*claim(*store_, "n1", 10));
  auto to_worker = store_->request_cancel(claimed.id);
  ASSERT_TRUE(to_worker) << to_worker.error().message();
  EXPECT_TRUE(*to_worker);
  auto ids = store_->heartbeat(Heartbeat{.node_id = "n1", .state = "up", .running = 0, .now = ts(20)});
  ASSERT_TRUE(ids) << ids.error().message();
  EXPECT_EQ(*ids, std::vector<std::string>{claimed.id});

  // Queued and unclaimed: the caller ends it. A node that claims it first sees the request.
  auto unclaimed = store_->request_cancel(queued.id);
  ASSERT_TRUE(unclaimed);
  EXPECT_FALSE(*unclaimed);
  auto c = claim(*store_, "n1", 30);
  ASSERT_TRUE(c && *c);
  EXPECT_EQ((*c)->id, queued.id);
  EXPECT_TRUE((*c)->cancel_requested);

  ASSERT_TRUE(store_->finish_job(claimed.id, "cancelled", ts(40), record_json(claimed.id, "cancelled"), {}));
  auto finished = store_->request_cancel(claimed.id);
  ASSERT_TRUE(finished);
  EXPECT_FALSE(*finished);
  auto unknown = store_->request_cancel("no-such-job");
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);
  auto after = store_->heartbeat(Heartbeat{.node_id = "n1", .state = "up", .now = ts(50)});
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, std::vector<std::string>{queued.id});  // the finished one is gone
}

TEST_P(StoreClaims, ReleaseLeaveAndDrainingNodes) {
  auto other = second_store();
  ASSERT_TRUE(other);
  up(*store_, "n1");
  up(*other, "n2");
  JobRow j = new_job(a_, 1), k = new_job(a_, 2);
  ASSERT_TRUE(*claim(*store_, "n1", 10));
  // Another node cannot hand back (or start) n1's claim.
  auto foreign = other->release_claim(j.id, "n2");
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().kind, ErrorKind::kRefused);
  ASSERT_TRUE(store_->release_claim(j.id, "n1"));
  EXPECT_EQ((*store_->job(a_, j.id))->node_id, "");
  auto twice = store_->release_claim(j.id, "n1");
  ASSERT_FALSE(twice);

  // Draining: no new claims.
  ASSERT_TRUE(store_->heartbeat(Heartbeat{.node_id = "n1", .state = "draining", .now = ts(20)}));
  auto drained = claim(*store_, "n1", 21);
  ASSERT_FALSE(drained);
  EXPECT_EQ(drained.error().kind, ErrorKind::kRefused);
  EXPECT_EQ((*store_->node("n1"))->state, "draining");

  // Leaving hands back what it still had claimed.
  ASSERT_TRUE(*claim(*other, "n2", 30));
  ASSERT_TRUE(other->leave_node("n2"));
  EXPECT_EQ((*store_->node("n2"))->state, "left");
  auto counts = store_->queue_counts(a_);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->queued, 2);
  EXPECT_EQ(counts->claimed, 0);
  auto beat = other->heartbeat(Heartbeat{.node_id = "n2", .state = "up", .now = ts(40)});
  ASSERT_FALSE(beat);
  EXPECT_EQ(beat.error().kind, ErrorKind::kRefused);
  auto unknown = store_->heartbeat(Heartbeat{.node_id = "ghost", .state = "up", .now = ts(40)});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::kRefused);
  (void)k;
}

TEST_P(StoreClaims, HostileNodeFieldsAreRefusedOrStoredInert) {
  // A warm image name with a comma would split into two names.
  auto comma = store_->register_node(NodeRow{.id = "n1", .role = "worker", .address = "a", .slots = 1,
                                             .warm_images = {"python,evil"}});
  ASSERT_FALSE(comma);
  EXPECT_EQ(comma.error().kind, ErrorKind::kInvalid);
  auto bad_state = store_->heartbeat(Heartbeat{.node_id = "n1", .state = "lost"});
  ASSERT_FALSE(bad_state);
  EXPECT_EQ(bad_state.error().kind, ErrorKind::kInvalid);
  auto bad_time = store_->declare_lost_nodes("yesterday'; DROP TABLE nodes; --", 1000);
  ASSERT_FALSE(bad_time);
  EXPECT_EQ(bad_time.error().kind, ErrorKind::kInvalid);
  const std::string nasty = "n'); DELETE FROM jobs; -- ?1 $1";
  ASSERT_TRUE(store_->register_node(NodeRow{.id = nasty, .role = "worker", .address = nasty, .slots = 1}));
  auto n = store_->node(nasty);
  ASSERT_TRUE(n && *n);
  EXPECT_EQ((*n)->address, nasty);
}

TEST_P(StoreClaims, AVersion3DatabaseMigratesToVersion4WithItsJobsClaimable) {
  // A fresh database built to schema 3 only, with a job, as airlock 3 left it.
  store_.reset();
  TempDir fresh;
  StoreOptions options = options_;
  if (!options.database_url.empty()) {
    std::string why;
    auto url = airlock::testing::shared_postgres(&why)->create_database();
    ASSERT_TRUE(url);
    options.database_url = *url;
  }
  {
    auto db = testing::raw_connection(options, fresh.path());
    ASSERT_TRUE(db) << db.error().message();
    ASSERT_TRUE(migrate(**db, 3));
    ASSERT_EQ(*schema_version(**db), 3);
    ASSERT_TRUE((*db)->exec(
        "INSERT INTO tenants (id, name, max_running, max_queued, max_memory_bytes, max_timeout_ms, "
        "max_cpu_time_ms, max_pids, created_at) VALUES ('t3', 'old', 2, 50, 1, 1, 1, 1, 'x')"));
    ASSERT_TRUE((*db)->exec(
        "INSERT INTO jobs (id, tenant_id, key_id, state, request_json, created_at) "
        "VALUES ('old-job', 't3', 'k', 'queued', '{}', '2025-12-31T00:00:00.000Z')"));
    ASSERT_TRUE((*db)->exec(
        "INSERT INTO sessions (id, tenant_id, key_id, state, request_json, created_at) "
        "VALUES ('old-session', 't3', 'k', 'open', '{}', '2025-12-31T00:00:00.000Z')"));
  }
  auto opened = Store::open(fresh.path(), options);
  ASSERT_TRUE(opened) << opened.error().message();
  auto& s = **opened;
  auto db = testing::raw_connection(options, fresh.path());
  ASSERT_TRUE(db);
  EXPECT_EQ(*schema_version(**db), 4);
  auto job = s.job("t3", "old-job");
  ASSERT_TRUE(job && *job);
  EXPECT_EQ((*job)->node_id, "");
  EXPECT_EQ((*job)->image, "");
  EXPECT_FALSE((*job)->cancel_requested);
  auto session = s.session("t3", "old-session");
  ASSERT_TRUE(session && *session);
  EXPECT_EQ((*session)->node_id, "");
  up(s, "n1");
  auto c = claim(s, "n1", 10);
  ASSERT_TRUE(c && *c) << (c ? "nothing claimed" : c.error().message());
  EXPECT_EQ((*c)->id, "old-job");
}

TEST_P(StoreClaims, ACreatedJobWakesAnotherStoresNotifierWithItsId) {
  if (options_.database_url.empty()) {
    // SQLite: no connection; wait() sleeps the whole timeout and says nothing.
    auto n = Notifier::open("", {kChannelJobs});
    ASSERT_TRUE(n) << n.error().message();
    auto start = std::chrono::steady_clock::now();
    auto got = (*n)->wait(std::chrono::milliseconds(150));
    auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got);
    EXPECT_GE(waited, std::chrono::milliseconds(150));
    return;
  }
  auto n = Notifier::open(options_.database_url, {kChannelJobs, kChannelFinished, kChannelCancel});
  ASSERT_TRUE(n) << n.error().message();
  auto other = second_store();
  ASSERT_TRUE(other);
  JobRow row{.tenant_id = a_, .key_id = "k", .request_json = "{}"};
  auto created = other->create_job(row);
  ASSERT_TRUE(created);
  auto got = (*n)->wait(std::chrono::seconds(10));
  ASSERT_TRUE(got) << got.error().message();
  ASSERT_TRUE(*got) << "no notification within 10 s";
  EXPECT_EQ((*got)->channel, kChannelJobs);
  EXPECT_EQ((*got)->payload, created->first.id);

  ASSERT_TRUE(other->finish_job(created->first.id, "succeeded", "", record_json(created->first.id, "succeeded"), {}));
  auto fin = (*n)->wait(std::chrono::seconds(10));
  ASSERT_TRUE(fin && *fin);
  EXPECT_EQ((*fin)->channel, kChannelFinished);
  EXPECT_EQ((*fin)->payload, created->first.id);

  // A refused write (finished twice) rolls its notification back with it.
  ASSERT_FALSE(other->finish_job(created->first.id, "succeeded", "", record_json(created->first.id, "succeeded"), {}));
  auto nothing = (*n)->wait(std::chrono::milliseconds(300));
  ASSERT_TRUE(nothing);
  EXPECT_FALSE(*nothing) << (*nothing)->channel << " " << (*nothing)->payload;
}

TEST_P(StoreClaims, ANotifierWhoseConnectionIsCutSaysSoOnceThenListensAgain) {
  if (options_.database_url.empty()) GTEST_SKIP() << "SQLite has no notification connection";
  auto n = Notifier::open(options_.database_url, {kChannelJobs});
  ASSERT_TRUE(n) << n.error().message();
  // The server ends the notifier's backend (an administrator, a failover).
  auto db = testing::raw_connection(options_, tmp_.path());
  ASSERT_TRUE(db);
  ASSERT_TRUE((*db)->exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE datname = current_database() AND query = 'LISTEN airlock_jobs' AND pid <> pg_backend_pid()"));
  auto cut = (*n)->wait(std::chrono::seconds(10));
  ASSERT_FALSE(cut) << "a cut connection went unnoticed";
  EXPECT_EQ(cut.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(cut.error().what.find("postgresql://"), std::string::npos) << cut.error().what;
  // The next wait reconnects and LISTENs again before it waits.
  auto quiet = (*n)->wait(std::chrono::milliseconds(100));
  ASSERT_TRUE(quiet) << quiet.error().message();
  JobRow job = new_job(a_, 1);
  auto got = (*n)->wait(std::chrono::seconds(10));
  ASSERT_TRUE(got) << got.error().message();
  ASSERT_TRUE(*got);
  EXPECT_EQ((*got)->payload, job.id);
}

TEST_P(StoreClaims, AHeartbeatJustInsideTheLeaseKeepsTheNodeUp) {
  up(*store_, "n1", 4, {}, 0);
  ASSERT_TRUE(store_->heartbeat(Heartbeat{.node_id = "n1", .state = "draining", .now = ts(9999)}));
  auto lost = store_->declare_lost_nodes(ts(19999), 10000);  // exactly the lease: not older
  ASSERT_TRUE(lost);
  EXPECT_TRUE(lost->empty());
  auto later = store_->declare_lost_nodes(ts(20000), 10000);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].node.state, "lost");  // draining nodes are lost too
}

AIRLOCK_STORE_BACKENDS(StoreClaims);

TEST(StoreNotifier, ChannelNamesAreCheckedBeforeTheyReachListen) {
  auto n = Notifier::open("", {"airlock_jobs; DROP TABLE jobs"});
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().kind, ErrorKind::kInvalid);
  auto upper = Notifier::open("", {"Airlock"});
  ASSERT_FALSE(upper);
  auto not_pg = Notifier::open("sqlite:///x", {kChannelJobs});
  ASSERT_FALSE(not_pg);
  EXPECT_EQ(not_pg.error().kind, ErrorKind::kInvalid);
}

}  // namespace
}  // namespace airlock::store
