// Forwarding (cluster/forward.h) between two real HTTP servers on loopback:
// a "worker" behind the node gate and an "API node" that forwards to it, as
// `airlock serve --role api|worker` wire them. Answers, uploads, event
// streams as they come, and what a client sees when the worker cannot be
// reached or answers late.
#include "cluster/forward.h"
#include "cluster/node_gate.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "http/client.h"
#include "http/server.h"

namespace airlock::cluster {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using api::HttpRequest;
using api::HttpResponse;

const std::string kKey = "forward-test-node-key-0123456789abcdef";

template <class Cond>
bool eventually(Cond cond, int ms = 5000) {
  auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// A port nothing listens on: bound, never listened, closed at the end.
class DeadPort {
 public:
  DeadPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~DeadPort() { ::close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

class ClusterForward : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-forward-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ + "/w");
    fs::create_directory(dir_ + "/a");

    api::ServerOptions w;
    w.spool_dir = dir_ + "/w";
    w.event_keepalive_ms = 100;
    w.gate = make_worker_gate(kKey);
    worker_ = std::make_unique<api::HttpServer>(w);
    worker_->route("GET", "/healthz", [](std::shared_ptr<api::Exchange> ex) {
      ex->respond(HttpResponse::json(200, {{"status", "ok"}}));
    });
    worker_->route("POST", "/v1/echo", [](std::shared_ptr<api::Exchange> ex) {
      const HttpRequest& r = ex->request();
      HttpResponse out = HttpResponse::json(201, {{"target", r.target},
                                                  {"query", r.query},
                                                  {"body", r.body},
                                                  {"authorization", r.header("authorization")},
                                                  {"idempotency", r.header("idempotency-key")},
                                                  {"forwarded_by", r.header("x-airlock-forwarded-by")},
                                                  {"cookie", r.header("cookie")}});
      out.headers.emplace_back("X-Content-SHA256", "abc");
      ex->respond(std::move(out));
    });
    api::RouteOptions spool;
    spool.spool_body = true;
    spool.max_body_bytes = 8 << 20;
    worker_->route(
        "PUT", "/v1/upload",
        [](std::shared_ptr<api::Exchange> ex) {
          ex->respond(HttpResponse::json(201, {{"bytes", ex->request().body_bytes}}));
        },
        spool);
    worker_->route("GET", "/v1/slow", [this](std::shared_ptr<api::Exchange> ex) {
      std::lock_guard lock(mu_);
      held_.push_back(ex);  // never answered while the test runs
    });
    worker_->route("GET", "/v1/events", [this](std::shared_ptr<api::Exchange> ex) {
      ex->start_events();
      ex->send_event("1", "stdout", ex->request().header("last-event-id"));
      ex->on_close([this] { worker_stream_closed_ = true; });
      std::lock_guard lock(mu_);
      streams_.push_back(ex);
    });
    worker_->route("GET", "/v1/missing-events", [](std::shared_ptr<api::Exchange> ex) {
      ex->respond(HttpResponse::error(404, "not_found", "no call x1"));
    });
    auto wp = worker_->start();
    ASSERT_TRUE(wp.has_value());
    worker_port_ = *wp;

    ForwarderOptions f;
    f.node_key = kKey;
    f.self_node_id = "api-1";
    f.base_timeout_ms = 1500;
    f.connect_timeout_ms = 1500;
    f.log = [this](const nlohmann::json& j) {
      std::lock_guard lock(mu_);
      log_.push_back(j);
    };
    forwarder_ = std::make_unique<Forwarder>(f);

    api::ServerOptions a;
    a.spool_dir = dir_ + "/a";
    api_ = std::make_unique<api::HttpServer>(a);
    auto to = [this](const HttpRequest& r) {
      uint16_t port = r.header("x-test-dead") == "1" ? dead_.port() : worker_port_;
      return ForwardTarget{"w1", "127.0.0.1:" + std::to_string(port)};
    };
    for (const char* path : {"/v1/echo", "/v1/slow", "/v1/nothing"}) {
      for (const char* method : {"GET", "POST"})
        api_->route(method, path, [this, to](std::shared_ptr<api::Exchange> ex) {
          forwarder_->send(ex, to(ex->request()), ForwardKind::kPlain);
        });
    }
    api_->route(
        "PUT", "/v1/upload",
        [this, to](std::shared_ptr<api::Exchange> ex) { forwarder_->send(ex, to(ex->request()), ForwardKind::kPlain); },
        spool);
    for (const char* path : {"/v1/events", "/v1/missing-events"})
      api_->route("GET", path, [this, to](std::shared_ptr<api::Exchange> ex) {
        forwarder_->send(ex, to(ex->request()), ForwardKind::kEvents);
      });
    auto ap = api_->start();
    ASSERT_TRUE(ap.has_value());
    api_port_ = *ap;
  }

  void TearDown() override {
    if (api_) api_->stop();
    if (forwarder_) forwarder_->stop();
    {
      std::lock_guard lock(mu_);
      held_.clear();
      streams_.clear();
    }
    if (worker_) worker_->stop();
    fs::remove_all(dir_);
  }

  std::string dir_;
  DeadPort dead_;
  std::unique_ptr<api::HttpServer> worker_, api_;
  std::unique_ptr<Forwarder> forwarder_;
  uint16_t worker_port_ = 0, api_port_ = 0;
  std::mutex mu_;
  std::vector<std::shared_ptr<api::Exchange>> held_, streams_;
  std::vector<nlohmann::json> log_;
  std::atomic<bool> worker_stream_closed_{false};
};

TEST_F(ClusterForward, TheRequestTravelsAsItCameAndTheAnswerComesBack) {
  api::HttpClient client(api_port_);
  auto r = client.request("POST", "/v1/echo?name=a%20b&x=1", R"({"a":1})",
                          {{"Authorization", "Bearer tenant-key"}, {"Idempotency-Key", "k1"}, {"Cookie", "c=1"},
                           {"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 201) << r.body << r.error;
  auto j = r.json();
  EXPECT_EQ(j["target"], "/v1/echo?name=a%20b&x=1");  // the target as sent, not re-encoded
  EXPECT_EQ(j["query"]["name"], "a b");
  EXPECT_EQ(j["body"], R"({"a":1})");
  EXPECT_EQ(j["authorization"], "Bearer tenant-key");
  EXPECT_EQ(j["idempotency"], "k1");
  EXPECT_EQ(j["forwarded_by"], "api-1");
  EXPECT_EQ(j["cookie"], "");
  EXPECT_EQ(r.headers["x-content-sha256"], "abc");
  EXPECT_EQ(r.headers["content-type"], "application/json");
}

TEST_F(ClusterForward, ASpooledUploadIsSentWhole) {
  api::HttpClient client(api_port_);
  std::string body(3 << 20, 'u');
  auto r = client.request("PUT", "/v1/upload", body, {{"Content-Type", "application/octet-stream"}});
  ASSERT_EQ(r.status, 201) << r.body << r.error;
  EXPECT_EQ(r.json()["bytes"], body.size());
}

TEST_F(ClusterForward, TheWorkerRefusesADirectCallWithoutTheKey) {
  api::HttpClient client(worker_port_);
  auto none = client.request("POST", "/v1/echo", "{}", {{"Authorization", "Bearer tenant-key"}});
  EXPECT_EQ(none.status, 403);
  EXPECT_EQ(none.json()["error"]["code"], "worker_node");
  auto wrong = client.request("POST", "/v1/echo", "{}", {{"X-Airlock-Node-Key", kKey.substr(1)}});
  EXPECT_EQ(wrong.status, 403);
  // Unknown paths are refused the same way: a prober learns nothing.
  EXPECT_EQ(client.request("GET", "/v1/nothing").status, 403);
  EXPECT_EQ(client.request("GET", "/healthz").status, 200);
  // The header twice (right key both times) is refused.
  api::HttpClient raw(worker_port_);
  auto twice = raw.request("POST", "/v1/echo", "{}", {{"X-Airlock-Node-Key", kKey}, {"x-airlock-node-key", kKey}});
  EXPECT_EQ(twice.status, 403) << twice.body;
  EXPECT_EQ(client.request("POST", "/v1/echo", "{}", {{"X-Airlock-Node-Key", kKey}}).status, 201);
}

TEST_F(ClusterForward, AnUnreachableNodeIs502NamingItsIdNotItsAddress) {
  api::HttpClient client(api_port_);
  auto r = client.request("POST", "/v1/echo", "{}", {{"X-Test-Dead", "1"}});
  ASSERT_EQ(r.status, 502) << r.body;
  EXPECT_EQ(r.json()["error"]["code"], "node_unreachable");
  EXPECT_NE(r.body.find("node w1"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("127.0.0.1"), std::string::npos) << r.body;
  std::lock_guard lock(mu_);
  ASSERT_FALSE(log_.empty());
  EXPECT_EQ(log_.back()["address"], "127.0.0.1:" + std::to_string(dead_.port()));  // the log has it
}

TEST_F(ClusterForward, ANodeThatAnswersLateIsCutAtTheTimeout) {
  api::HttpClient client(api_port_, 10'000);
  auto started = Clock::now();
  auto r = client.request("GET", "/v1/slow");
  ASSERT_EQ(r.status, 504) << r.body << r.error;
  EXPECT_EQ(r.json()["error"]["code"], "node_timeout");
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(8));
}

TEST_F(ClusterForward, EventsArriveAsTheyComeAndTheStreamEndsWithTheWorkers) {
  api::HttpClient client(api_port_);
  auto stream = client.open_events("/v1/events", {{"Last-Event-ID", "7"}});
  ASSERT_EQ(stream.status(), 200) << stream.error();
  auto first = stream.next(3000);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, "1");
  EXPECT_EQ(first->data, "7");  // Last-Event-ID reached the worker
  std::shared_ptr<api::Exchange> upstream;
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mu_);
    if (!streams_.empty()) upstream = streams_.back();
    return upstream != nullptr;
  }));
  // A later event is passed on while the stream is open, not at its end.
  upstream->send_event("2", "stderr", "line\nnext");
  auto second = stream.next(3000);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->event, "stderr");
  EXPECT_EQ(second->data, "line\nnext");
  upstream->end_events();
  EXPECT_FALSE(stream.next(3000).has_value());
  EXPECT_TRUE(stream.ended());
  EXPECT_TRUE(eventually([&] { return forwarder_->in_flight() == 0; }));
}

TEST_F(ClusterForward, AClientThatLeavesClosesTheWorkersStream) {
  {
    api::HttpClient client(api_port_);
    auto stream = client.open_events("/v1/events");
    ASSERT_EQ(stream.status(), 200);
    ASSERT_TRUE(stream.next(3000).has_value());
    stream.close();
  }
  EXPECT_TRUE(eventually([&] { return worker_stream_closed_.load(); }, 8000));
  EXPECT_TRUE(eventually([&] { return forwarder_->in_flight() == 0; }));
}

TEST_F(ClusterForward, AnEventRouteThatAnswersPlainlyIsPassedOnPlainly) {
  api::HttpClient client(api_port_);
  auto stream = client.open_events("/v1/missing-events");
  EXPECT_EQ(stream.status(), 404);
  EXPECT_NE(stream.read_rest(3000, 4096).find("no call x1"), std::string::npos);
  auto dead = client.open_events("/v1/events", {{"X-Test-Dead", "1"}});
  EXPECT_EQ(dead.status(), 502);
}

}  // namespace
}  // namespace airlock::cluster
