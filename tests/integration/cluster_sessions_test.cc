// Sessions across nodes (docs/sessions.md "Many machines"): two real
// `airlock serve` processes on loopback, an API node and a worker, SQLite in
// one shared data directory. A session opened through the API runs on the
// worker; its calls, files and output stream go through the API; the worker
// refuses a direct call without the node key; and when the worker is
// SIGKILLed its session closes "node lost: w1" once the lease has passed.
// The nodes are roles' ClusterNodes (tests/integration/cluster_nodes.h).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <thread>

#include "cluster_nodes.h"
#include "run_helpers.h"
#include "service_fixture.h"
#include "store/store.h"
#include "support/http_client.h"
#include "support/serve_launch.h"

namespace airlock::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// POST /v1/sessions through the API, retried while no worker has
// registered yet (503 no_worker).
Response create_session(HttpClient& http, const TestKey& key) {
  Response r;
  for (auto end = Clock::now() + std::chrono::seconds(20); Clock::now() < end;) {
    r = http.request("POST", "/v1/sessions", "{}", key.auth());
    if (r.status != 503) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return r;
}

class ClusterSessions : public ::testing::Test {
 protected:
  ClusterNodes cluster{ClusterOptions{}};
};

TEST_F(ClusterSessions, ASessionThroughTheApiRunsOnTheWorkerAndClosesNodeLostWhenItDies) {
  cluster.add("worker", "w1");
  cluster.add("api", "a1");
  const uint16_t api_port = cluster.node("a1").port; [[maybe_unused]] const uint16_t worker_port = cluster.node("w1").port;
  HttpClient http(api_port, 90'000);
  auto alpha_ = cluster.alpha.auth();

  auto created = create_session(http, cluster.alpha);
  ASSERT_EQ(created.status, 201) << created.body << "\napi log:\n" << cluster.log("a1") << "\nworker log:\n" << cluster.log("w1");
  std::string sid = created.json()["id"];
  EXPECT_EQ(created.json()["state"], "ready");

  // The row names the worker.
  {
    store::StoreOptions so = store::StoreOptions::defaults();
    so.content_dir = cluster.content_dir();
    auto s = store::Store::open(cluster.data_dir(), so);
    ASSERT_TRUE(s.has_value());
    auto row = (*s)->session_of_any_tenant(sid);
    ASSERT_TRUE(row.has_value() && row->has_value());
    EXPECT_EQ((*row)->node_id, "w1");
  }

  // A call, through the API.
  auto call = http.request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"x = 6 * 7\nx","wait_s":60})", alpha_);
  ASSERT_EQ(call.status, 201) << call.body;
  EXPECT_EQ(call.json()["status"], "ok") << call.body;
  EXPECT_EQ(call.json()["result"]["value"], "42") << call.body;

  // Its output stream, through the API, as it comes.
  auto printing = http.request("POST", "/v1/sessions/" + sid + "/execs",
                               json{{"code", "import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(0.2)"}}.dump(),
                               alpha_);
  ASSERT_EQ(printing.status, 201) << printing.body;
  std::string xid = printing.json()["id"];
  {
    HttpClient events(api_port);
    auto stream = events.open_events("/v1/sessions/" + sid + "/execs/" + xid + "/events", alpha_);
    ASSERT_EQ(stream.status(), 200) << stream.error();
    std::string text;
    bool result = false;
    while (auto e = stream.next(15000)) {
      if (e->event == "result") {
        result = true;
        EXPECT_EQ(e->id, "done");
        EXPECT_EQ(json::parse(e->data)["status"], "ok");
      } else {
        text += json::parse(e->data)["text"].get<std::string>();
      }
    }
    EXPECT_EQ(text, "line 0\nline 1\nline 2\n");
    EXPECT_TRUE(result);
  }

  // Files, through the API: up, listed, down with the hash.
  std::string csv = "a,b\n1,2\n";
  auto up = http.request("PUT", "/v1/sessions/" + sid + "/files?path=data/t.csv", csv,
                         {{"authorization", alpha_["authorization"]}, {"content-type", "application/octet-stream"}});
  ASSERT_EQ(up.status, 201) << up.body;
  auto listing = http.request("GET", "/v1/sessions/" + sid + "/files?path=data", "", alpha_);
  ASSERT_EQ(listing.status, 200) << listing.body;
  EXPECT_NE(listing.body.find("t.csv"), std::string::npos) << listing.body;
  auto down = http.request("GET", "/v1/sessions/" + sid + "/files/content?path=data/t.csv", "", alpha_);
  ASSERT_EQ(down.status, 200) << down.body;
  EXPECT_EQ(down.body, csv);
  EXPECT_EQ(down.headers["x-content-sha256"].size(), 64u);

  // The worker itself refuses the same call without the node key, and
  // with a wrong one; the tenant's key alone is not enough.
  HttpClient direct(worker_port);
  for (const auto& extra : std::vector<std::map<std::string, std::string>>{
           {}, {{"X-Airlock-Node-Key", "wrong"}}, {{"X-Airlock-Node-Key", std::string(kTestNodeKey) + "x"}}}) {
    auto headers = alpha_;
    headers.insert(extra.begin(), extra.end());
    auto r = direct.request("GET", "/v1/sessions/" + sid, "", headers);
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_NE(r.body.find("worker_node"), std::string::npos) << r.body;
  }
  EXPECT_EQ(direct.request("GET", "/healthz").status, 200);

  // The worker dies with the session open: after the lease, a sweep
  // closes it "node lost: w1", and the API answers from the store.
  cluster.kill_hard("w1");
  json v;
  for (auto end = Clock::now() + std::chrono::seconds(30); Clock::now() < end;) {
    auto r = http.request("GET", "/v1/sessions/" + sid, "", alpha_);
    if (r.status == 200) {
      v = r.json();
      if (v.value("state", "") == "closed") break;
    } else {
      EXPECT_EQ(r.status, 502) << r.body;  // until the sweep: the node by id
      EXPECT_NE(r.body.find("node w1"), std::string::npos) << r.body;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(v.value("state", ""), "closed") << v.dump() << "\napi log:\n" << cluster.log("a1");
  EXPECT_EQ(v["close_reason"], "node lost: w1");
  EXPECT_EQ(v["record"]["node"], "w1");
  EXPECT_EQ(v["record"]["calls"].size(), 2u) << v["record"].dump();
  // A call to the closed session is answered by the API itself.
  auto late = http.request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"1"})", alpha_);
  EXPECT_EQ(late.status, 409) << late.body;
}

// A job's live output, read from the API node while the job runs on the
// worker: the stream is opened before the worker claims the job (the API
// waits), passed on as it comes, and ends with the job's end event.
TEST_F(ClusterSessions, AJobsLiveOutputThroughTheApiComesFromItsWorker) {
  cluster.add("worker", "w1");
  cluster.add("api", "a1");
  HttpClient http(cluster.node("a1").port);
  auto r = http.request("POST", "/v1/jobs",
                        json{{"command", {"sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.3; done"}}}.dump(),
                        cluster.alpha.auth());
  ASSERT_EQ(r.status, 201) << r.body;
  std::string id = r.json()["id"];
  HttpClient events(cluster.node("a1").port);
  auto stream = events.open_events("/v1/jobs/" + id + "/events", cluster.alpha.auth());
  ASSERT_EQ(stream.status(), 200) << stream.error();
  std::string text;
  json end;
  while (auto e = stream.next(20000)) {
    if (e->event == "end") end = json::parse(e->data);
    else text += json::parse(e->data)["text"].get<std::string>();
  }
  EXPECT_EQ(text, "tick 1\ntick 2\ntick 3\n");
  EXPECT_EQ(end.value("outcome", ""), "succeeded") << end.dump() << "\n" << cluster.log("a1");
  // Finished: the API node replays it from the store.
  auto again = events.open_events("/v1/jobs/" + id + "/events", cluster.alpha.auth());
  ASSERT_EQ(again.status(), 200);
  std::string replay;
  while (auto e = again.next(10000))
    if (e->event != "end") replay += json::parse(e->data)["text"].get<std::string>();
  EXPECT_EQ(replay, text);
}

}  // namespace
}  // namespace airlock::testing
