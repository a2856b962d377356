// cluster::NodePulse against a real store (SQLite in a temporary directory):
// it registers, beats, hands out the cancels asked for this node's jobs, and
// when the others declared it lost it stops its jobs and registers again.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/claim_source.h"
#include "cluster/node_pulse.h"
#include "jobs/record.h"
#include "store/store.h"
#include "store_test_util.h"

using namespace airlock;
using namespace std::chrono_literals;

namespace {

template <class F>
bool eventually(F done, std::chrono::milliseconds within = 5000ms) {
  auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

class ClusterPulse : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::open(tmp_.path() + "/data");
    ASSERT_TRUE(s) << s.error().message();
    store_ = std::move(*s);
    tenant_ = store_->create_tenant("acme", {})->id;
  }
  std::string queue_job() {
    store::JobRow row;
    row.tenant_id = tenant_;
    row.key_id = "k1";
    row.request_json = R"({"command":["true"]})";
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    return created ? created->first.id : "";
  }
  store::NodeRow self() {
    store::NodeRow n;
    n.id = "w1";
    n.role = "worker";
    n.address = "127.0.0.1:1";
    n.slots = 2;
    return n;
  }
  store::testing::TempDir tmp_;
  std::unique_ptr<store::Store> store_;
  std::string tenant_;
};

TEST_F(ClusterPulse, BeatsAndHandsOutCancelsForItsJobs) {
  std::mutex mu;
  std::vector<std::string> cancels;
  cluster::PulseHooks hooks;
  hooks.state = [] { return cluster::PulseState{false, 1, 0, {}}; };
  hooks.cancel = [&](const std::vector<std::string>& ids) {
    std::lock_guard lock(mu);
    cancels.insert(cancels.end(), ids.begin(), ids.end());
  };
  cluster::NodePulse pulse(*store_, self(), 20ms, hooks);
  ASSERT_TRUE(pulse.start());
  auto first = store_->node("w1");
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->state, "up");
  ASSERT_TRUE(eventually([&] {
    auto n = store_->node("w1");
    return n && *n && (*n)->running == 1 && (*n)->heartbeat_at != (*first)->heartbeat_at;
  }));
  // A job this node claimed, cancelled from elsewhere: the next beat hands it out.
  std::string id = queue_job();
  auto claimed = store_->claim_job({.node_id = "w1", .now = jobs::now_rfc3339()});
  ASSERT_TRUE(claimed && *claimed) << (claimed ? "nothing claimable" : claimed.error().message());
  ASSERT_EQ((*claimed)->id, id);
  auto asked = store_->request_cancel(id);
  ASSERT_TRUE(asked && *asked);
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return std::find(cancels.begin(), cancels.end(), id) != cancels.end();
  }));
  pulse.stop();
}

TEST_F(ClusterPulse, DeclaredLostItStopsItsJobsAndRegistersAgain) {
  std::atomic<int> lost{0}, lives{0};
  std::atomic<bool> previous_was_lost{false};
  cluster::PulseHooks hooks;
  hooks.lost = [&] { ++lost; };
  hooks.left = [&](const store::LostNode& left) {
    ++lives;
    if (left.node.state == "lost") previous_was_lost = true;
  };
  cluster::NodePulse pulse(*store_, self(), 20ms, hooks);
  ASSERT_TRUE(pulse.start());
  EXPECT_EQ(lives, 1);  // the first registration
  // The others see its heartbeat a minute old (their `now` is ahead).
  auto later = jobs::rfc3339(std::chrono::system_clock::now() + std::chrono::minutes(1));
  auto declared = store_->declare_lost_nodes(later, 10'000);
  ASSERT_TRUE(declared) << declared.error().message();
  ASSERT_EQ(declared->size(), 1u);
  // Its next heartbeat is refused: it stops its jobs, then comes back up.
  ASSERT_TRUE(eventually([&] { return lost == 1 && lives == 2; }));
  EXPECT_TRUE(previous_was_lost);
  ASSERT_TRUE(eventually([&] {
    auto n = store_->node("w1");
    return n && *n && (*n)->state == "up";
  }));
  pulse.stop();
  EXPECT_EQ(lost, 1);
}

TEST_F(ClusterPulse, ClaimSourceClaimsQueuedJobsAndStopsWhenClosed) {
  cluster::NodePulse pulse(*store_, self(), 50ms, {});
  ASSERT_TRUE(pulse.start());
  cluster::ClaimSource source(*store_, "w1", nullptr, nullptr);
  std::string id = queue_job();
  auto job = source.next();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->job_id, id);
  EXPECT_EQ(job->tenant_id, tenant_);
  // Nothing more to claim: next() waits until closed, then answers nullopt.
  std::thread closer([&] {
    std::this_thread::sleep_for(100ms);
    source.close();
  });
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(source.next());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 90ms);
  closer.join();
  EXPECT_FALSE(source.next());  // closed stays closed
  pulse.stop();
}

}  // namespace
