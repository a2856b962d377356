// The pure parts of cluster mode: admission by the store's counts
// (cluster/admission.h) and what /healthz and /metrics say of the nodes
// (cluster/node_health.h).
#include <gtest/gtest.h>

#include "cluster/admission.h"
#include "cluster/lost_nodes.h"
#include "cluster/node_health.h"

using namespace airlock;

namespace {

TEST(ClusterAdmission, TenantCapFirstThenTheQueue) {
  EXPECT_FALSE(cluster::admission_refusal(0, 0, 64, 16));
  EXPECT_FALSE(cluster::admission_refusal(63, 15, 64, 16));
  auto tenant = cluster::admission_refusal(10, 16, 64, 16);
  ASSERT_TRUE(tenant);
  EXPECT_EQ(*tenant, "this tenant already has 16 queued jobs, its cap (tenant_max_queued 16)");
  auto full = cluster::admission_refusal(64, 3, 64, 16);
  ASSERT_TRUE(full);
  EXPECT_EQ(*full, "the service's queue is full (64 jobs)");
  // Other tenants filling the queue cannot keep a tenant's first job out.
  EXPECT_FALSE(cluster::admission_refusal(500, 0, 64, 16));
  // A tenant cap of 0 refuses even the first job (the tenant's stored max_queued is 0).
  EXPECT_TRUE(cluster::admission_refusal(0, 0, 64, 0));
}

store::NodeRow node(const std::string& id, const std::string& state, const std::string& beat, int running) {
  store::NodeRow n;
  n.id = id;
  n.role = "worker";
  n.state = state;
  n.heartbeat_at = beat;
  n.running = running;
  n.slots = 4;
  n.sessions = 1;
  return n;
}

TEST(ClusterHealth, NodesWithTheirHeartbeatAge) {
  auto j = cluster::nodes_json({node("w1", "up", "2026-12-01T10:00:00.000Z", 2),
                                node("w2", "lost", "2026-12-01T09:59:47.500Z", 0),
                                node("w3", "up", "not a time", 0)},
                               "2026-12-01T10:00:01.250Z");
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["id"], "w1");
  EXPECT_EQ(j[0]["heartbeat_age_ms"], 1250);
  EXPECT_EQ(j[0]["running"], 2);
  EXPECT_EQ(j[0]["slots"], 4);
  EXPECT_EQ(j[0]["sessions"], 1);
  EXPECT_EQ(j[0]["role"], "worker");
  EXPECT_EQ(j[1]["heartbeat_age_ms"], 13750);
  EXPECT_EQ(j[1]["state"], "lost");
  EXPECT_TRUE(j[2]["heartbeat_age_ms"].is_null());
  // A clock a little ahead of ours is age 0, not negative.
  auto ahead = cluster::nodes_json({node("w1", "up", "2026-12-01T10:00:02.000Z", 0)}, "2026-12-01T10:00:01.000Z");
  EXPECT_EQ(ahead[0]["heartbeat_age_ms"], 0);
}

TEST(ClusterHealth, MetricsCountEveryStateAndLiveNodesJobs) {
  std::string m = cluster::nodes_metrics({node("a", "up", "", 3), node("b", "draining", "", 1),
                                          node("c", "lost", "", 5), node("d", "left", "", 0)});
  for (const char* line : {"airlock_nodes{state=\"up\"} 1\n", "airlock_nodes{state=\"draining\"} 1\n",
                           "airlock_nodes{state=\"lost\"} 1\n", "airlock_nodes{state=\"left\"} 1\n",
                           "airlock_node_running_jobs{node=\"a\"} 3\n", "airlock_node_running_jobs{node=\"b\"} 1\n"})
    EXPECT_NE(m.find(line), std::string::npos) << line << m;
  // A lost node's last count is not a running job any more.
  EXPECT_EQ(m.find("node=\"c\""), std::string::npos) << m;
  EXPECT_NE(cluster::nodes_metrics({}).find("airlock_nodes{state=\"up\"} 0\n"), std::string::npos);
}

TEST(ClusterLostNodes, ReasonNamesTheNode) { EXPECT_EQ(cluster::lost_reason("w-7"), "node lost: w-7"); }

}  // namespace
