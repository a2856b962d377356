// How the MCP tools follow an event stream of the API (src/mcp/event_follow.h),
// against a real HTTP server on loopback that plays the API: a stream that
// goes silent without keep-alives is taken for dead and resumed with
// Last-Event-ID (nothing lost, nothing twice); a silent stream that sends
// keep-alives is left alone; a cancelled call runs its cancel action.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "http/server.h"
#include "mcp/event_follow.h"

namespace airlock::mcp {
namespace {

using namespace std::chrono_literals;

struct FakeApi {
  explicit FakeApi(int keepalive_ms) {
    api::ServerOptions o;
    o.event_keepalive_ms = keepalive_ms;
    server = std::make_unique<api::HttpServer>(o);
    server->route("GET", "/events", [this](std::shared_ptr<api::Exchange> ex) {
      std::lock_guard lock(mu);
      last_event_ids.push_back(ex->request().header("last-event-id"));
      ex->start_events();
      on_connect(ex, last_event_ids.size());
      held.push_back(ex);  // kept open (and silent) until the test says otherwise
    });
    port = *server->start();
  }
  ~FakeApi() { server->stop(); }

  ApiConnection client(int keepalive_ms) {
    return ApiConnection(ApiTarget{"127.0.0.1", port, "key", "http://127.0.0.1", keepalive_ms});
  }

  std::function<void(const std::shared_ptr<api::Exchange>&, size_t connection)> on_connect;
  std::unique_ptr<api::HttpServer> server;
  uint16_t port = 0;
  std::mutex mu;
  std::vector<std::string> last_event_ids;
  std::vector<std::shared_ptr<api::Exchange>> held;
};

void send_output(const std::shared_ptr<api::Exchange>& ex, int offset, const std::string& text) {
  ex->send_event(std::to_string(offset + text.size()), "stdout",
                 nlohmann::json{{"offset", offset}, {"text", text}}.dump());
}

TEST(McpEventFollow, ADeadSilentStreamIsResumedWithLastEventIdWithoutLossOrRepeats) {
  FakeApi fake(0);  // no keep-alives: a silent stream looks dead
  fake.on_connect = [](const std::shared_ptr<api::Exchange>& ex, size_t n) {
    if (n == 1) return send_output(ex, 0, "a");  // then silence, connection left open
    send_output(ex, 1, "b");
    ex->send_event("", "end", "{}");
    ex->end_events();
  };
  auto api = fake.client(100);  // dead after 300 ms of nothing
  std::string seen;
  CallContext ctx;
  auto r = follow_events(
      api, "/events", "end",
      [&](const api::Event& ev) {
        seen += nlohmann::json::parse(ev.data)["text"].get<std::string>();
      },
      ctx, [] {});
  ASSERT_TRUE(r.final) << r.error;
  EXPECT_EQ(seen, "ab");
  EXPECT_EQ(r.reconnects, 1);
  std::lock_guard lock(fake.mu);
  EXPECT_EQ(fake.last_event_ids, (std::vector<std::string>{"", "1"}));
}

TEST(McpEventFollow, ASilentCallWithKeepAlivesIsNotTakenForDead) {
  FakeApi fake(50);  // a keep-alive comment every 50 ms of silence
  fake.on_connect = [](const std::shared_ptr<api::Exchange>& ex, size_t) {
    send_output(ex, 0, "a");
    std::thread([ex] {
      std::this_thread::sleep_for(1200ms);  // four times the client's dead-stream time
      ex->send_event("", "end", "{}");
      ex->end_events();
    }).detach();
  };
  auto api = fake.client(100);
  CallContext ctx;
  auto r = follow_events(
      api, "/events", "end", [](const api::Event&) {}, ctx, [] {});
  ASSERT_TRUE(r.final) << r.error;
  EXPECT_EQ(r.reconnects, 0);
  std::lock_guard lock(fake.mu);
  EXPECT_EQ(fake.last_event_ids.size(), 1u);
}

TEST(McpEventFollow, CancellingRunsTheCancelActionOnceAndWaitsForTheEnd) {
  FakeApi fake(50);
  fake.on_connect = [](const std::shared_ptr<api::Exchange>& ex, size_t) {
    send_output(ex, 0, "a");
  };
  auto api = fake.client(100);
  CallContext ctx;
  std::thread cancel([&] {
    std::this_thread::sleep_for(200ms);
    ctx.cancelled->store(true);
  });
  int cancels = 0;
  auto r = follow_events(
      api, "/events", "end", [](const api::Event&) {}, ctx,
      [&] {
        ++cancels;
        std::lock_guard lock(
            fake.mu);  // as the API does: the job ends, the stream sends its final event
        fake.held.back()->send_event("", "end", R"({"outcome":"cancelled"})");
        fake.held.back()->end_events();
      });
  cancel.join();
  ASSERT_TRUE(r.final) << r.error;
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(cancels, 1);
  EXPECT_EQ(r.final->data, R"({"outcome":"cancelled"})");
}

}  // namespace
}  // namespace airlock::mcp
