// Sessions across nodes (docs/sessions.md "Many machines"): two real
// `airlock serve` processes on loopback, an API node and a worker, SQLite in
// one shared data directory. A session opened through the API runs on the
// worker; its calls, files and output stream go through the API; the worker
// refuses a direct call without the node key; and when the worker is
// SIGKILLed its session closes "node lost: w1" once the lease has passed.
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

#include "run_helpers.h"
#include "service_fixture.h"
#include "store/store.h"
#include "support/http_client.h"
#include "support/serve_launch.h"

namespace airlock::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kNodeKey = "cluster-sessions-test-node-key-0123456789";

// A loopback port free right now (the node must know its own port up front:
// it is its address in the nodes table).
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Node {
  pid_t pid = -1;
  uint16_t port = 0;
  std::string log;
};

class ClusterSessions : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.sub("data");
    auto s = store::Store::open(data_, store::StoreOptions::defaults());
    ASSERT_TRUE(s.has_value()) << s.error().message();
    store::TenantLimits limits;
    auto a = (*s)->create_tenant("alpha", limits);
    ASSERT_TRUE(a.has_value());
    auto key = (*s)->create_key(a->id, "test", {"run", "read"});
    ASSERT_TRUE(key.has_value());
    alpha_ = {{"authorization", "Bearer " + key->second}};
    config_ = dir_.sub("node.toml");
    {
      std::ofstream f(config_);
      f << "node_key = \"" << kNodeKey << "\"\nnode_lease_ms = 2000\nheartbeat_ms = 200\n";
    }
    ::chmod(config_.c_str(), 0600);
  }

  void TearDown() override {
    for (Node* n : {&api_, &worker_}) stop(*n);
    for (const char* state : {"state-w1", "state-a1"}) run_airlock({"sweep", "--state-dir", dir_.sub(state)});
  }

  Node start(const std::string& role, const std::string& id) {
    std::string state = dir_.sub("state-" + id);
    ::mkdir(state.c_str(), 0711);
    uint16_t port = free_port();
    std::string listen = "127.0.0.1:" + std::to_string(port);
    Node n;
    n.log = dir_.sub(id + ".log");
    auto launched = launch_serve({AIRLOCK_BINARY, "serve", "--config", config_, "--role", role, "--node-id", id,
                                  "--listen", listen, "--node-address", listen, "--data-dir", data_,
                                  "--state-dir", state},
                                 n.log, O_APPEND, 0644);
    n.pid = launched.pid;
    n.port = launched.port;
    EXPECT_NE(n.port, 0) << role << ": " << launched.first_line << "\n" << read_text(n.log);
    return n;
  }

  static void stop(Node& n) {
    if (n.pid <= 0) return;
    ::kill(n.pid, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(n.pid, nullptr, WNOHANG) == n.pid) {
        n.pid = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(n.pid, SIGKILL);
    ::waitpid(n.pid, nullptr, 0);
    n.pid = -1;
  }

  // POST /v1/sessions through the API, retried while no worker has
  // registered yet (503 no_worker).
  Response create_session(HttpClient& http) {
    Response r;
    for (auto end = Clock::now() + std::chrono::seconds(20); Clock::now() < end;) {
      r = http.request("POST", "/v1/sessions", "{}", alpha_);
      if (r.status != 503) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return r;
  }

  TempDir dir_;
  std::string data_, config_;
  std::map<std::string, std::string> alpha_;
  Node api_, worker_;
};

TEST_F(ClusterSessions, ASessionThroughTheApiRunsOnTheWorkerAndClosesNodeLostWhenItDies) {
  worker_ = start("worker", "w1");
  api_ = start("api", "a1");
  ASSERT_NE(worker_.port, 0);
  ASSERT_NE(api_.port, 0);
  HttpClient http(api_.port, 90'000);

  auto created = create_session(http);
  ASSERT_EQ(created.status, 201) << created.body << "\napi log:\n" << read_text(api_.log);
  std::string sid = created.json()["id"];
  EXPECT_EQ(created.json()["state"], "ready");

  // The row names the worker.
  {
    auto s = store::Store::open(data_, store::StoreOptions::defaults());
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
                               R"({"code":"import time\nfor i in range(3):\n    print('line', i, flush=True)\n    time.sleep(0.2)"})",
                               alpha_);
  ASSERT_EQ(printing.status, 201) << printing.body;
  std::string xid = printing.json()["id"];
  {
    HttpClient events(api_.port);
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
  HttpClient direct(worker_.port);
  for (const auto& extra : std::vector<std::map<std::string, std::string>>{
           {}, {{"X-Airlock-Node-Key", "wrong"}}, {{"X-Airlock-Node-Key", kNodeKey + "x"}}}) {
    auto headers = alpha_;
    headers.insert(extra.begin(), extra.end());
    auto r = direct.request("GET", "/v1/sessions/" + sid, "", headers);
    EXPECT_EQ(r.status, 403) << r.body;
    EXPECT_NE(r.body.find("worker_node"), std::string::npos) << r.body;
  }
  EXPECT_EQ(direct.request("GET", "/healthz").status, 200);

  // The worker dies with the session open: after the lease, a sweep
  // closes it "node lost: w1", and the API answers from the store.
  ::kill(worker_.pid, SIGKILL);
  ::waitpid(worker_.pid, nullptr, 0);
  worker_.pid = -1;
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
  ASSERT_EQ(v.value("state", ""), "closed") << v.dump() << "\napi log:\n" << read_text(api_.log);
  EXPECT_EQ(v["close_reason"], "node lost: w1");
  EXPECT_EQ(v["record"]["node"], "w1");
  EXPECT_EQ(v["record"]["calls"].size(), 2u) << v["record"].dump();
  // A call to the closed session is answered by the API itself.
  auto late = http.request("POST", "/v1/sessions/" + sid + "/execs", R"({"code":"1"})", alpha_);
  EXPECT_EQ(late.status, 409) << late.body;
}

}  // namespace
}  // namespace airlock::testing
