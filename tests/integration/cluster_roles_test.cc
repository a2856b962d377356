// airlock serve --role api|worker (issue 17, CLUSTER-CONTRACT.md "Service"):
// one API node and worker nodes on loopback sharing a database and a content
// directory, on SQLite (a shared data_dir) and on a real PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "cluster_nodes.h"
#include "support/postgres_server.h"

using namespace airlock::testing;
using json = nlohmann::json;

namespace {

class ClusterRoles : public ::testing::TestWithParam<std::string> {
 protected:
  // The options for this backend; skips when PostgreSQL is asked for and not installed.
  ClusterOptions options(uint64_t lease_ms = 1500) {
    ClusterOptions o;
    o.node_lease_ms = lease_ms;
    if (GetParam() == "postgres") {
      std::string why;
      PostgresServer* pg = shared_postgres(&why);
      if (!pg) {
        skip_ = why;
        return o;
      }
      auto url = pg->create_database();
      if (!url) throw std::runtime_error(url.error().message());
      o.database_url = *url;
    }
    return o;
  }
  std::string skip_;
};

std::string submit(HttpClient& c, const TestKey& k, const json& body) {
  auto r = c.request("POST", "/v1/jobs", body.dump(), k.auth());
  EXPECT_EQ(r.status, 201) << r.body;
  return r.status == 201 ? r.json()["id"].get<std::string>() : "";
}

// No job started twice, on any node (the logs' job_started events).
void expect_each_job_started_once(const ClusterNodes& cluster) {
  std::map<std::string, std::vector<std::string>> starts;
  for (const auto& e : cluster.events("job_started"))
    starts[e["job_id"].get<std::string>()].push_back(e["log_node"].get<std::string>());
  for (const auto& [id, where] : starts) {
    std::string nodes;
    for (const auto& n : where) nodes += n + " ";
    EXPECT_EQ(where.size(), 1u) << "job " << id << " started on: " << nodes;
  }
}

TEST_P(ClusterRoles, JobsSubmittedToTheApiRunOnTheWorkers) {
  auto o = options();
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ClusterNodes cluster(o);
  cluster.add("api", "api-1");
  cluster.add("worker", "w1", 2);
  cluster.add("worker", "w2", 2);
  auto api = cluster.client("api-1");

  // wait_s answers when the worker has finished it; its upload and output
  // go through the shared content directory.
  std::string input = upload(api, cluster.alpha, "in.txt", "uploaded-to-the-api\n");
  auto first = api.request("POST", "/v1/jobs",
                           json{{"command", {"sh", "-c", "cp /inputs/in.txt /output/out.txt; echo from-a-worker"}},
                                {"inputs", {input}}, {"wait_s", 60}}.dump(),
                           cluster.alpha.auth());
  ASSERT_EQ(first.status, 201) << first.body;
  json done = first.json();
  ASSERT_EQ(done["state"], "finished") << done.dump(2);
  EXPECT_EQ(done["outcome"], "succeeded");
  std::string node = done["record"]["node"];
  EXPECT_TRUE(node == "w1" || node == "w2") << node;
  auto download = api.request("GET", "/v1/jobs/" + done["id"].get<std::string>() + "/outputs/out.txt", "",
                              cluster.alpha.auth());
  EXPECT_EQ(download.status, 200);
  EXPECT_EQ(download.body, "uploaded-to-the-api\n");

  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(submit(api, cluster.alpha, {{"command", {"sh", "-c", "sleep 1; echo job" + std::to_string(i)}}}));
  std::set<std::string> ran_on;
  for (size_t i = 0; i < ids.size(); ++i) {
    json j = wait_for_job(api, cluster.alpha, ids[i], "finished", 60000);
    ASSERT_EQ(j["state"], "finished") << j.dump(2);
    EXPECT_EQ(j["outcome"], "succeeded") << j.dump(2);
    EXPECT_EQ(j["record"]["stdout"]["text"], "job" + std::to_string(i) + "\n");
    ran_on.insert(j["record"]["node"].get<std::string>());
  }
  // 8 one-second jobs on 2 + 2 slots: both workers ran some, the API none.
  EXPECT_EQ(ran_on, (std::set<std::string>{"w1", "w2"}));
  for (const auto& e : cluster.events("job_started")) EXPECT_NE(e["log_node"], "api-1") << e.dump();
  expect_each_job_started_once(cluster);

  auto health = api.request("GET", "/healthz", "", {});
  ASSERT_EQ(health.status, 200) << health.body;
  json h = health.json();
  EXPECT_EQ(h["role"], "api");
  EXPECT_EQ(h["node"], "api-1");
  ASSERT_EQ(h["nodes"].size(), 3u) << h.dump(2);
  for (const auto& n : h["nodes"]) {
    EXPECT_EQ(n["state"], "up") << n.dump();
    EXPECT_LT(n["heartbeat_age_ms"].get<int64_t>(), 1500) << n.dump();
  }
  auto metrics = api.request("GET", "/metrics", "", {}).body;
  EXPECT_NE(metrics.find("airlock_nodes{state=\"up\"} 3"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("airlock_node_running_jobs{node=\"w1\"}"), std::string::npos) << metrics;
  // One chain, written by two workers; the artifact is where the record says.
  std::vector<std::string> verify = {"verify", "--data-dir", cluster.data_dir(), "--content-dir", cluster.content_dir()};
  if (!o.database_url.empty()) verify.insert(verify.end(), {"--database-url", o.database_url});
  auto v = run_airlock(verify);
  EXPECT_EQ(v.status, 0) << v.out << v.err;
}

TEST_P(ClusterRoles, CancelOnTheApiReachesTheJobRunningOnAWorker) {
  auto o = options();
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ClusterNodes cluster(o);
  cluster.add("api", "api-1");
  cluster.add("worker", "w1", 1);
  auto api = cluster.client("api-1");
  std::string id = submit(api, cluster.alpha, {{"command", {"sh", "-c", "sleep 1000 & sleep 1000"}}});
  ASSERT_EQ(wait_for_job(api, cluster.alpha, id, "running")["state"], "running");
  auto asked = std::chrono::steady_clock::now();
  auto c = api.request("POST", "/v1/jobs/" + id + "/cancel", "", cluster.alpha.auth());
  ASSERT_EQ(c.status, 200) << c.body;
  EXPECT_EQ(c.json()["cancel"], "requested");
  json done = wait_for_job(api, cluster.alpha, id, "finished", 20000);
  ASSERT_EQ(done["outcome"], "cancelled") << done.dump(2);
  EXPECT_EQ(done["record"]["node"], "w1");
  // Within a few heartbeats (200 ms), not a lease or a timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(5));
  uid_t uid = done["record"]["sandbox"]["host_uid"];
  EXPECT_TRUE(no_processes_of_uid(uid, 2000));
  // A queued job cancelled on the API never reaches a worker.
  std::string busy = submit(api, cluster.alpha, {{"command", {"sleep", "3"}}});
  ASSERT_EQ(wait_for_job(api, cluster.alpha, busy, "running")["state"], "running");
  std::string waiting = submit(api, cluster.alpha, {{"command", {"echo", "never"}}});
  auto c2 = api.request("POST", "/v1/jobs/" + waiting + "/cancel", "", cluster.alpha.auth());
  ASSERT_EQ(c2.status, 200) << c2.body;
  json w = wait_for_job(api, cluster.alpha, waiting, "finished", 10000);
  EXPECT_EQ(w["outcome"], "cancelled") << w.dump(2);
  EXPECT_EQ(wait_for_job(api, cluster.alpha, busy, "finished")["outcome"], "succeeded");
  for (const auto& e : cluster.events("job_started")) EXPECT_NE(e["job_id"], waiting);
  expect_each_job_started_once(cluster);
}

TEST_P(ClusterRoles, SigtermDrainsAWorker) {
  auto o = options();
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ClusterNodes cluster(o);
  cluster.add("api", "api-1");
  cluster.add("worker", "w1", 1);
  auto api = cluster.client("api-1");
  std::string running = submit(api, cluster.alpha, {{"command", {"sh", "-c", "sleep 2; echo finished-anyway"}}});
  ASSERT_EQ(wait_for_job(api, cluster.alpha, running, "running")["state"], "running");
  std::string later1 = submit(api, cluster.alpha, {{"command", {"echo", "one"}}});
  std::string later2 = submit(api, cluster.alpha, {{"command", {"echo", "two"}}});
  // Drains: the running job finishes, w1 takes nothing more and exits 0.
  EXPECT_EQ(cluster.term("w1"), 0) << cluster.log("w1");
  json r = wait_for_job(api, cluster.alpha, running, "finished", 1000);
  EXPECT_EQ(r["outcome"], "succeeded") << r.dump(2);
  EXPECT_EQ(r["record"]["node"], "w1");
  for (const auto& id : {later1, later2})
    EXPECT_EQ(wait_for_job(api, cluster.alpha, id, "queued", 1000)["state"], "queued") << id;
  json h = api.request("GET", "/healthz", "", {}).json();
  for (const auto& n : h["nodes"])
    if (n["id"] == "w1") { EXPECT_EQ(n["state"], "left") << h.dump(2); }
  // The other worker runs what w1 left.
  cluster.add("worker", "w2", 1);
  for (const auto& id : {later1, later2}) {
    json j = wait_for_job(api, cluster.alpha, id, "finished", 20000);
    EXPECT_EQ(j["outcome"], "succeeded") << j.dump(2);
    EXPECT_EQ(j["record"]["node"], "w2") << j.dump(2);
  }
  expect_each_job_started_once(cluster);
}

TEST_P(ClusterRoles, SigkillOfAWorkerEndsItsRunningJobAsNodeLost) {
  auto o = options(1500);
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ClusterNodes cluster(o);
  cluster.add("api", "api-1");
  cluster.add("worker", "w1", 1);
  auto api = cluster.client("api-1");
  std::string started = submit(api, cluster.alpha, {{"command", {"sleep", "1000"}}});
  ASSERT_EQ(wait_for_job(api, cluster.alpha, started, "running")["state"], "running");
  std::string queued = submit(api, cluster.alpha, {{"command", {"echo", "elsewhere"}}});
  cluster.kill_hard("w1");
  auto killed = std::chrono::steady_clock::now();
  cluster.add("worker", "w2", 1);
  json lost = wait_for_job(api, cluster.alpha, started, "finished", 20000);
  ASSERT_EQ(lost["state"], "finished") << lost.dump(2);
  EXPECT_EQ(lost["outcome"], "sandbox_error");
  EXPECT_EQ(lost["record"]["reason"], "node lost: w1") << lost.dump(2);
  EXPECT_EQ(lost["record"]["node"], "w1");
  // Only once the lease (1.5 s) has passed.
  EXPECT_GE(std::chrono::steady_clock::now() - killed, std::chrono::milliseconds(1500));
  json other = wait_for_job(api, cluster.alpha, queued, "finished", 20000);
  EXPECT_EQ(other["outcome"], "succeeded") << other.dump(2);
  EXPECT_EQ(other["record"]["node"], "w2");
  // One node declared it lost, once.
  EXPECT_EQ(cluster.events("node_lost").size(), 1u);
  json h = api.request("GET", "/healthz", "", {}).json();
  for (const auto& n : h["nodes"])
    if (n["id"] == "w1") { EXPECT_EQ(n["state"], "lost") << h.dump(2); }
  auto metrics = api.request("GET", "/metrics", "", {}).body;
  EXPECT_NE(metrics.find("airlock_nodes{state=\"lost\"} 1"), std::string::npos) << metrics;
  expect_each_job_started_once(cluster);
}

TEST_P(ClusterRoles, ARestartedWorkerEndsWhatItsPreviousLifeLeft) {
  // A long lease: the worker is back before anyone declares it lost.
  auto o = options(30000);
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ClusterNodes cluster(o);
  cluster.add("api", "api-1");
  cluster.add("worker", "w1", 1);
  auto api = cluster.client("api-1");
  std::string started = submit(api, cluster.alpha, {{"command", {"sleep", "1000"}}});
  ASSERT_EQ(wait_for_job(api, cluster.alpha, started, "running")["state"], "running");
  cluster.kill_hard("w1");
  cluster.start("w1");
  json lost = wait_for_job(api, cluster.alpha, started, "finished", 10000);
  ASSERT_EQ(lost["state"], "finished") << lost.dump(2) << cluster.log("w1");
  EXPECT_EQ(lost["outcome"], "sandbox_error");
  EXPECT_EQ(lost["record"]["reason"], "node lost: w1");
  EXPECT_EQ(lost["record"]["node"], "w1");
  EXPECT_TRUE(cluster.events("node_lost").empty());  // ended by the restart, not by a sweep
  ASSERT_EQ(cluster.events("previous_life_ended").size(), 1u) << cluster.log("w1");
  // The restarted worker runs jobs again.
  std::string next = submit(api, cluster.alpha, {{"command", {"echo", "back"}}});
  json j = wait_for_job(api, cluster.alpha, next, "finished", 20000);
  EXPECT_EQ(j["outcome"], "succeeded") << j.dump(2);
  expect_each_job_started_once(cluster);
}

TEST(ClusterRolesConfig, ServeRefusesABadRoleAndAnUnreachableNodeAtStart) {
  auto r = run_airlock({"serve", "--role", "foo"});
  EXPECT_EQ(r.status, 125);
  EXPECT_NE(r.err.find("role 'foo': must be api, worker or all"), std::string::npos) << r.err;
  auto port0 = run_airlock({"serve", "--role", "worker", "--node-id", "w", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(port0.status, 125);
  EXPECT_NE(port0.err.find("node_address"), std::string::npos) << port0.err;
}

INSTANTIATE_TEST_SUITE_P(Backends, ClusterRoles, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
