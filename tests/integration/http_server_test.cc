// The HTTP layer over real sockets: a server on an ephemeral loopback port,
// driven by the test client (tests/support/http_client.h) and raw sockets.
// Every test stops its server (the fixture's TearDown) and removes its files.
#include "http/server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "support/http_client.h"

namespace airlock::api {
namespace {

using airlock::testing::EventStream;
using airlock::testing::HttpClient;
using airlock::testing::RawConnection;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Polls `cond` for up to `ms`: for effects that follow a response on the server side.
template <class Cond>
bool eventually(Cond cond, int ms = 3000) {
  auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-http-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directory(dir_ + "/spool");
    options_.spool_dir = dir_ + "/spool";
    options_.access_log = [this](const nlohmann::json& line) {
      std::lock_guard lock(log_mutex_);
      log_.push_back(line);
    };
  }

  void TearDown() override {
    if (server_) server_->stop();
    server_.reset();
    for (auto& t : workers_) t.join();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  HttpServer& server() {
    if (!server_) server_ = std::make_unique<HttpServer>(options_);
    return *server_;
  }

  uint16_t start() {
    auto port = server().start();
    EXPECT_TRUE(port.has_value()) << (port ? "" : port.error().message());
    return port.value_or(0);
  }

  std::vector<nlohmann::json> log_lines() {
    std::lock_guard lock(log_mutex_);
    return log_;
  }

  void echo_routes() {
    server().route("GET", "/v1/things/{id}", [](std::shared_ptr<Exchange> ex) {
      const HttpRequest& r = ex->request();
      ex->respond(HttpResponse::json(200, {{"method", r.method},
                                           {"path", r.path},
                                           {"params", r.params},
                                           {"query", r.query},
                                           {"x_test", r.header("x-test")},
                                           {"remote", r.remote}}));
    });
    server().route("POST", "/v1/things", [](std::shared_ptr<Exchange> ex) {
      ex->respond(HttpResponse::json(201, {{"bytes", ex->request().body_bytes},
                                           {"body", ex->request().body}}));
    });
    server().route("GET", "/v1/things", [](std::shared_ptr<Exchange> ex) {
      ex->respond(HttpResponse::json(200, nlohmann::json::array()));
    });
  }

  ServerOptions options_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::thread> workers_;  // joined after the server stopped
  std::string dir_;
  std::mutex log_mutex_;
  std::vector<nlohmann::json> log_;
};

TEST_F(HttpServerTest, RoutesParamsQueryHeadersAndAccessLog) {
  echo_routes();
  uint16_t port = start();
  HttpClient client(port);
  auto r = client.request("GET", "/v1/things/a%20b?x=1&y=p+q&x=2", "", {{"X-Test", "yes"}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  EXPECT_EQ(r.headers["content-type"], "application/json");
  auto j = r.json();
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/v1/things/a b");
  EXPECT_EQ(j["params"]["id"], "a b");
  EXPECT_EQ(j["query"]["x"], "2");
  EXPECT_EQ(j["query"]["y"], "p q");
  EXPECT_EQ(j["x_test"], "yes");
  EXPECT_EQ(j["remote"], "127.0.0.1:" + std::to_string(client.local_port()));

  auto posted = client.request("POST", "/v1/things", "hello");
  ASSERT_EQ(posted.status, 201);
  EXPECT_EQ(posted.json()["bytes"], 5);
  EXPECT_EQ(posted.json()["body"], "hello");

  ASSERT_TRUE(eventually([&] { return log_lines().size() >= 2; }));
  auto line = log_lines()[0];
  EXPECT_EQ(line["method"], "GET");
  EXPECT_EQ(line["path"], "/v1/things/a%2520b");  // raw path, escaped for the log
  EXPECT_EQ(line["status"], 200);
  EXPECT_TRUE(line.contains("duration_ms"));
  EXPECT_EQ(log_lines()[1]["bytes_in"], 5);
}

TEST_F(HttpServerTest, NotFoundAndMethodNotAllowedAreJsonErrors) {
  echo_routes();
  uint16_t port = start();
  HttpClient client(port);
  EXPECT_EQ(client.request("GET", "/v1/things").status, 200);
  uint16_t before = client.local_port();
  auto missing = client.request("GET", "/v1/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.headers["content-type"], "application/json");
  EXPECT_EQ(missing.json()["error"]["code"], "not_found");

  auto wrong = client.request("DELETE", "/v1/things");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.headers["allow"], "GET, POST");
  EXPECT_EQ(wrong.json()["error"]["code"], "method_not_allowed");

  EXPECT_EQ(client.request("GET", "/v1/things/%zz").status, 400);
  // Errors for requests without a body keep the connection.
  EXPECT_EQ(client.request("GET", "/v1/things").status, 200);
  EXPECT_EQ(client.local_port(), before);
}

TEST_F(HttpServerTest, MalformedRequestsGet400) {
  echo_routes();
  uint16_t port = start();
  {
    RawConnection raw(port);
    raw.send("BLAH\r\n\r\n");
    std::string got = raw.read_until_close(5000);
    EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << got;
  }
  {
    RawConnection raw(port);
    raw.send("GET /v1/things/x HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    EXPECT_EQ(raw.read_until_close(5000).rfind("HTTP/1.1 400", 0), 0u);
  }
  HttpClient client(port);
  auto nul = client.request("GET", "/v1/things/a%00b");
  EXPECT_EQ(nul.status, 400);
  EXPECT_EQ(nul.json()["error"]["code"], "bad_request");
  EXPECT_EQ(client.request("GET", "/v1/things/a%2Fb").status, 400);  // '/' never in a param
  EXPECT_EQ(client.request("GET", "/v1/things/x?q=%00").status, 400);
  EXPECT_EQ(client.request("GET", "/v1/things/%zz").status, 400);
  EXPECT_EQ(client.request("GET", "/v1/things/ok").status, 200);  // the server is fine
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  echo_routes();
  uint16_t port = start();
  RawConnection raw(port);
  raw.send(
      "GET /v1/things/one HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
      "GET /v1/things/three HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string got = raw.read_until_close(5000);
  size_t one = got.find("\"id\":\"one\"");
  size_t two = got.find("\"body\":\"abc\"");
  size_t three = got.find("\"id\":\"three\"");
  ASSERT_NE(one, std::string::npos) << got;
  ASSERT_NE(two, std::string::npos) << got;
  ASSERT_NE(three, std::string::npos) << got;
  EXPECT_LT(one, two);
  EXPECT_LT(two, three);
}

TEST_F(HttpServerTest, Http10ClientGetsItsAnswerAndAClose) {
  echo_routes();
  uint16_t port = start();
  RawConnection raw(port);
  raw.send("GET /v1/things/old HTTP/1.0\r\n\r\n");
  std::string got = raw.read_until_close(5000);
  EXPECT_EQ(got.rfind("HTTP/1.0 200", 0), 0u) << got;
  EXPECT_NE(got.find("\"id\":\"old\""), std::string::npos);
}

TEST_F(HttpServerTest, HeaderTooLargeGets431) {
  echo_routes();
  uint16_t port = start();
  HttpClient client(port);
  auto r = client.request("GET", "/v1/things/x", "", {{"X-Big", std::string(20000, 'a')}});
  EXPECT_EQ(r.status, 431) << r.error;
  EXPECT_EQ(r.json()["error"]["code"], "header_too_large");
  EXPECT_EQ(client.request("GET", "/v1/things/x", "", {{"X-Ok", std::string(8000, 'a')}}).status,
            200);
}

TEST_F(HttpServerTest, BodyOverTheRouteLimitGets413AndTheConnectionCloses) {
  server().route(
      "POST", "/small",
      [](std::shared_ptr<Exchange> ex) {
        ex->respond(HttpResponse::json(200, {{"bytes", ex->request().body_bytes}}));
      },
      RouteOptions{.max_body_bytes = 1024});
  uint16_t port = start();
  {
    // Declared too large: refused after the header, before any body byte is read.
    RawConnection raw(port);
    raw.send("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n");
    std::string got = raw.read_until("\r\n\r\n", 5000);
    EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
    EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
    EXPECT_TRUE(raw.closed_within(5000));
  }
  {
    // Chunked, so the size shows only while reading.
    RawConnection raw(port);
    raw.send("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    raw.send("400\r\n" + std::string(1024, 'a') + "\r\n10\r\n" + std::string(16, 'b') + "\r\n");
    std::string got = raw.read_until("\r\n\r\n", 5000);
    EXPECT_EQ(got.rfind("HTTP/1.1 413", 0), 0u) << got;
    EXPECT_TRUE(raw.closed_within(5000));
  }
  HttpClient client(port);
  auto ok = client.request("POST", "/small", std::string(1024, 'x'));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.json()["bytes"], 1024);
  auto big = client.request("POST", "/small", std::string(1025, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(big.json()["error"]["code"], "body_too_large");
}

TEST_F(HttpServerTest, HandlerThatThrowsGets500AndTheServerGoesOn) {
  server().route("GET", "/boom", [](std::shared_ptr<Exchange>) {
    throw std::runtime_error("boom");
  });
  server().route("GET", "/forgot", [](std::shared_ptr<Exchange>) {
    // Releases the exchange without an answer.
  });
  echo_routes();
  uint16_t port = start();
  HttpClient client(port);
  auto r = client.request("GET", "/boom");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.json()["error"]["code"], "internal");
  EXPECT_EQ(client.request("GET", "/forgot").status, 500);
  EXPECT_EQ(client.request("GET", "/v1/things/still-here").status, 200);
  ASSERT_TRUE(eventually([&] { return log_lines().size() >= 3; }));
  EXPECT_EQ(log_lines()[0]["error"], "handler threw: boom");
  EXPECT_EQ(log_lines()[0]["status"], 500);
}

TEST_F(HttpServerTest, OddStatusesAreSafe) {
  server().route("GET", "/status/{code}", [](std::shared_ptr<Exchange> ex) {
    HttpResponse r;
    r.status = std::stoi(ex->request().params.at("code"));
    r.body = "ignored for 204";
    ex->respond(std::move(r));
  });
  uint16_t port = start();
  HttpClient client(port);
  auto none = client.request("GET", "/status/204");
  EXPECT_EQ(none.status, 204);
  EXPECT_EQ(none.body, "");
  EXPECT_EQ(client.request("GET", "/status/101").status, 500);
  EXPECT_EQ(client.request("GET", "/status/7000").status, 500);
  EXPECT_EQ(client.request("GET", "/status/418").status, 418);
}

TEST_F(HttpServerTest, HandlerAnswersLaterFromAnotherThread) {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::shared_ptr<Exchange>> waiting;
  bool done = false;
  server().route("GET", "/later/{n}", [&](std::shared_ptr<Exchange> ex) {
    std::lock_guard lock(m);
    waiting.push_back(std::move(ex));
    cv.notify_all();
  });
  echo_routes();
  uint16_t port = start();
  std::thread worker([&] {
    std::unique_lock lock(m);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      for (auto& ex : waiting) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ex->respond(HttpResponse::json(200, {{"n", ex->request().params.at("n")}}));
      }
      waiting.clear();
    }
  });
  // While one handler waits, the I/O threads serve others.
  std::thread other([&] {
    HttpClient c(port);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(c.request("GET", "/v1/things/x").status, 200);
  });
  HttpClient client(port);
  for (int i = 0; i < 3; ++i) {
    auto r = client.request("GET", "/later/" + std::to_string(i));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.json()["n"], std::to_string(i));
  }
  other.join();
  {
    std::lock_guard lock(m);
    done = true;
  }
  worker.join();
}

TEST_F(HttpServerTest, ServerSentEventsInOrderThenEnd) {
  server().route("GET", "/events", [this](std::shared_ptr<Exchange> ex) {
    ex->start_events();
    workers_.emplace_back([ex] {
      ex->send_event("1", "stdout", "first");
      ex->send_event("2", "stdout", "two\nlines");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ex->send_event("3", "exit", "{\"code\":0}");
      ex->end_events();
    });
  });
  uint16_t port = start();
  HttpClient client(port);
  EventStream events = client.open_events("/events");
  ASSERT_EQ(events.status(), 200);
  EXPECT_EQ(events.headers().at("content-type"), "text/event-stream");
  auto a = events.next();
  auto b = events.next();
  auto c = events.next();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->id, "1");
  EXPECT_EQ(a->event, "stdout");
  EXPECT_EQ(a->data, "first");
  EXPECT_EQ(b->data, "two\nlines");
  EXPECT_EQ(c->event, "exit");
  EXPECT_EQ(c->data, "{\"code\":0}");
  EXPECT_FALSE(events.next(3000).has_value());
  EXPECT_TRUE(events.ended());
}

// A stream with nothing to say sends ": keep-alive" comments at the interval,
// and none while events flow; the events around them arrive intact.
TEST_F(HttpServerTest, SilentEventStreamSendsKeepAliveComments) {
  options_.event_keepalive_ms = 100;
  server().route("GET", "/events", [this](std::shared_ptr<Exchange> ex) {
    ex->start_events();
    workers_.emplace_back([ex] {
      ex->send_event("1", "stdout", "before");
      std::this_thread::sleep_for(std::chrono::milliseconds(550));
      ex->send_event("2", "stdout", "after");
      ex->end_events();
    });
  });
  uint16_t port = start();
  RawConnection raw(port);
  ASSERT_TRUE(raw.send("GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string got = raw.read_until_close(5000);
  size_t before = got.find("data: before"), after = got.find("data: after");
  ASSERT_NE(before, std::string::npos) << got;
  ASSERT_NE(after, std::string::npos) << got;
  size_t comments = 0;
  for (size_t at = got.find(": keep-alive\n\n"); at != std::string::npos; at = got.find(": keep-alive\n\n", at + 1)) {
    EXPECT_GT(at, before);
    EXPECT_LT(at, after);
    ++comments;
  }
  // 550 ms of silence at a 100 ms interval: about five; load may delay some.
  EXPECT_GE(comments, 2u) << got;
  EXPECT_LE(comments, 6u) << got;
}

TEST_F(HttpServerTest, EventClientThatDisconnectsFiresOnClose) {
  std::promise<void> closed;
  std::shared_ptr<Exchange> held;
  std::mutex m;
  server().route("GET", "/events", [&](std::shared_ptr<Exchange> ex) {
    ex->on_close([&closed] { closed.set_value(); });
    ex->start_events();
    ex->send_event("1", "", "hello");
    std::lock_guard lock(m);
    held = ex;
  });
  uint16_t port = start();
  HttpClient client(port);
  EventStream events = client.open_events("/events");
  auto first = events.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->data, "hello");
  events.close();
  ASSERT_EQ(closed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  std::lock_guard lock(m);
  EXPECT_TRUE(held->closed());
  held->send_event("2", "", "nobody listens");  // harmless
  held->end_events();
  bool late = false;
  held->on_close([&late] { late = true; });  // already over: runs at once
  EXPECT_TRUE(late);
}

TEST_F(HttpServerTest, SlowHeaderAndSlowBodyAreCut) {
  // Long enough that a loaded machine does not cut the well-behaved client below.
  options_.header_timeout_ms = 1000;
  options_.body_timeout_ms = 1000;
  echo_routes();
  uint16_t port = start();
  {
    RawConnection raw(port);
    auto t0 = Clock::now();
    raw.send("GET /v1/things/x HTTP/1.1\r\nHost: x\r\n");  // never finished
    EXPECT_TRUE(raw.closed_within(5000));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    EXPECT_GE(ms, 900);
    EXPECT_LT(ms, 4000);
  }
  {
    RawConnection raw(port);  // connects and says nothing
    EXPECT_TRUE(raw.closed_within(5000));
  }
  {
    RawConnection raw(port);
    raw.send("POST /v1/things HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten..");
    EXPECT_TRUE(raw.closed_within(5000));
  }
  HttpClient client(port);
  auto r = client.request("GET", "/v1/things/x");
  EXPECT_EQ(r.status, 200) << r.error;
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  options_.idle_timeout_ms = 200;
  echo_routes();
  uint16_t port = start();
  RawConnection raw(port);
  raw.send("GET /v1/things/x HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(raw.read_until("\r\n\r\n", 5000).find("200 OK"), std::string::npos);
  EXPECT_TRUE(raw.closed_within(5000));
}

TEST_F(HttpServerTest, FiftyConcurrentKeepAliveClients) {
  echo_routes();
  uint16_t port = start();
  constexpr int kClients = 50, kRequests = 20;
  std::atomic<int> ok{0}, reused{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      HttpClient client(port);
      uint16_t first_port = 0;
      for (int i = 0; i < kRequests; ++i) {
        auto r = client.request("GET", "/v1/things/c" + std::to_string(c) + "?i=" +
                                           std::to_string(i));
        if (r.status == 200 && r.json()["params"]["id"] == "c" + std::to_string(c) &&
            r.json()["query"]["i"] == std::to_string(i)) {
          ++ok;
        }
        if (i == 0) first_port = client.local_port();
        if (i > 0 && client.local_port() == first_port) ++reused;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
  EXPECT_EQ(reused.load(), kClients * (kRequests - 1));  // one connection per client
}

TEST_F(HttpServerTest, SpooledUploadLandsInAFileAndIsRemovedAfterwards) {
  std::mutex m;
  std::string seen_path, kept_path;
  uint64_t seen_size = 0;
  server().route(
      "PUT", "/upload",
      [&](std::shared_ptr<Exchange> ex) {
        const HttpRequest& r = ex->request();
        struct stat st {};
        bool there = ::stat(r.body_file.c_str(), &st) == 0;
        {
          std::lock_guard lock(m);
          seen_path = r.body_file;
          seen_size = there ? static_cast<uint64_t>(st.st_size) : 0;
        }
        ex->respond(HttpResponse::json(200, {{"bytes", r.body_bytes}, {"body", r.body}}));
      },
      RouteOptions{.max_body_bytes = 64 << 20, .spool_body = true});
  server().route(
      "PUT", "/keep",
      [&](std::shared_ptr<Exchange> ex) {
        std::string to = dir_ + "/kept";
        std::rename(ex->request().body_file.c_str(), to.c_str());
        {
          std::lock_guard lock(m);
          kept_path = to;
        }
        ex->respond(HttpResponse::json(200, {{"bytes", ex->request().body_bytes}}));
      },
      RouteOptions{.max_body_bytes = 64 << 20, .spool_body = true});
  uint16_t port = start();

  std::string body(20 << 20, '\0');
  std::mt19937 rng(7);
  for (char& ch : body) ch = static_cast<char>(rng());
  HttpClient client(port);
  auto r = client.request("PUT", "/upload", body);
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  EXPECT_EQ(r.json()["bytes"], 20 << 20);
  EXPECT_EQ(r.json()["body"], "");  // not in memory
  {
    std::lock_guard lock(m);
    EXPECT_EQ(seen_size, 20u << 20);
    EXPECT_EQ(seen_path.rfind(options_.spool_dir + "/", 0), 0u) << seen_path;
  }
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(m);
    return !exists(seen_path);
  }));

  auto kept = client.request("PUT", "/keep", "keep me");
  ASSERT_EQ(kept.status, 200);
  std::ifstream in(dir_ + "/kept");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "keep me");
  EXPECT_TRUE(eventually([&] { return fs::is_empty(options_.spool_dir); }));
}

TEST_F(HttpServerTest, FileResponsesAreStreamed) {
  std::string path = dir_ + "/payload.bin";
  std::string content(3 << 20, '\0');
  std::mt19937 rng(11);
  for (char& ch : content) ch = static_cast<char>(rng());
  std::ofstream(path, std::ios::binary) << content;
  server().route("GET", "/file", [&](std::shared_ptr<Exchange> ex) {
    HttpResponse r;
    r.file = path;
    r.headers.emplace_back("Content-Type", "application/octet-stream");
    r.headers.emplace_back("X-Sha", "given");
    r.headers.emplace_back("X-Bad", "a\r\nInjected: 1");  // dropped, not sent
    ex->respond(std::move(r));
  });
  server().route("GET", "/missing", [&](std::shared_ptr<Exchange> ex) {
    HttpResponse r;
    r.file = dir_ + "/no-such-file";
    ex->respond(std::move(r));
  });
  uint16_t port = start();
  HttpClient client(port);
  auto r = client.request("GET", "/file");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.body.size(), content.size());
  EXPECT_TRUE(r.body == content);
  EXPECT_EQ(r.headers["content-type"], "application/octet-stream");
  EXPECT_EQ(r.headers["x-sha"], "given");
  EXPECT_EQ(r.headers.count("x-bad"), 0u);
  EXPECT_EQ(r.headers.count("injected"), 0u);
  EXPECT_EQ(client.request("GET", "/missing").status, 500);
  EXPECT_EQ(client.request("GET", "/file").body.size(), content.size());  // still keep-alive
}

TEST_F(HttpServerTest, OverTheLimitTheOldestIdleConnectionMakesRoom) {
  options_.max_connections = 2;
  echo_routes();
  uint16_t port = start();
  RawConnection oldest(port);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  HttpClient b(port);
  ASSERT_EQ(b.request("GET", "/v1/things/b").status, 200);  // then idle, keep-alive
  HttpClient third(port);
  EXPECT_EQ(third.request("GET", "/v1/things/c").status, 200);
  EXPECT_TRUE(oldest.closed_within(5000));
  EXPECT_EQ(b.request("GET", "/v1/things/b").status, 200);  // reconnects: it was next in line
}

TEST_F(HttpServerTest, ConnectionsOverTheLimitGet503WhenAllAreInsideARequest) {
  options_.max_connections = 2;
  std::mutex m;
  std::vector<std::shared_ptr<Exchange>> held;
  server().route("GET", "/hold", [&](std::shared_ptr<Exchange> ex) {
    std::lock_guard lock(m);
    held.push_back(std::move(ex));
  });
  uint16_t port = start();
  RawConnection a(port), b(port);
  ASSERT_TRUE(a.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(b.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(m);
      if (held.size() == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  RawConnection third(port);
  EXPECT_EQ(third.read_until_close(5000).rfind("HTTP/1.1 503", 0), 0u);
  EXPECT_FALSE(a.closed_within(0));
  std::lock_guard lock(m);
  for (auto& ex : held) ex->respond(HttpResponse::json(200, {{"ok", true}}));
}

TEST_F(HttpServerTest, StopClosesStreamsAndLaterAnswersAreHarmless) {
  std::mutex m;
  std::vector<std::shared_ptr<Exchange>> held;
  server().route("GET", "/hold", [&](std::shared_ptr<Exchange> ex) {
    std::lock_guard lock(m);
    held.push_back(std::move(ex));
  });
  server().route("GET", "/events", [&](std::shared_ptr<Exchange> ex) {
    ex->start_events();
    std::lock_guard lock(m);
    held.push_back(std::move(ex));
  });
  uint16_t port = start();
  RawConnection pending(port);
  pending.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  HttpClient client(port);
  EventStream events = client.open_events("/events");
  ASSERT_EQ(events.status(), 200);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(m);
    return held.size() == 2;
  }));
  auto t0 = Clock::now();
  server().stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(pending.closed_within(2000));
  EXPECT_FALSE(events.next(2000).has_value());
  std::lock_guard lock(m);
  for (auto& ex : held) {
    EXPECT_TRUE(ex->closed());
    ex->respond(HttpResponse::json(200, {}));
    ex->send_event("1", "", "late");
    ex->end_events();
  }
  held.clear();  // releasing after stop() is fine too
}

}  // namespace
}  // namespace airlock::api
