// What an API node sends a worker and passes back (cluster/forward_message.h).
#include "cluster/forward_message.h"

#include <gtest/gtest.h>

namespace airlock::cluster {
namespace {

TEST(ForwardMessage, NodeAddressesAreIpLiteralsWithAPort) {
  auto v4 = parse_node_address("10.0.0.7:8470");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->host, "10.0.0.7");
  EXPECT_EQ(v4->port, 8470);
  auto v6 = parse_node_address("[fd00::7]:80");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "fd00::7");
  auto named = parse_node_address("worker-1.airlock:8470");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->host, "worker-1.airlock");
  EXPECT_FALSE(named->literal);
  EXPECT_TRUE(v4->literal);
  for (const char* bad : {"", "10.0.0.7", ":80", "10.0.0.7:", "10.0.0.7:0", "10.0.0.7:65536", "-w:80",
                          "a b:80", "10.0.0.7:80x", "10.0.0.7/x:80", "w@evil:80", "[::1:80"})
    EXPECT_FALSE(parse_node_address(bad).has_value()) << bad;
}

TEST(ForwardMessage, OnlyTheNamedHeadersTravelAndTheKeyIsOurs) {
  api::HttpRequest r;
  r.remote = "192.0.2.9:5555";
  r.headers = {{"authorization", "Bearer k"}, {"content-type", "application/json"}, {"idempotency-key", "i1"},
               {"last-event-id", "42"}, {"accept", "text/event-stream"}, {"cookie", "c=1"},
               {"x-airlock-node-key", "the client's guess"}, {"x-airlock-forwarded-by", "spoofed"},
               {"x-forwarded-for", "spoofed"}, {"host", "api.example"}};
  auto h = forwarded_headers(r, "the-node-key", "api-1");
  EXPECT_EQ(h.at("Authorization"), "Bearer k");
  EXPECT_EQ(h.at("Content-Type"), "application/json");
  EXPECT_EQ(h.at("Idempotency-Key"), "i1");
  EXPECT_EQ(h.at("Last-Event-ID"), "42");
  EXPECT_EQ(h.at("Accept"), "text/event-stream");
  EXPECT_EQ(h.at("X-Airlock-Node-Key"), "the-node-key");
  EXPECT_EQ(h.at("X-Airlock-Forwarded-By"), "api-1");
  EXPECT_EQ(h.at("X-Forwarded-For"), "192.0.2.9");
  EXPECT_EQ(h.size(), 8u);  // no cookie, no host, nothing of the client's under our names
}

TEST(ForwardMessage, ConnectionHeadersStayBehind) {
  auto out = answer_headers({{"content-type", "application/json"}, {"x-content-sha256", "ab"}, {"etag", "\"e\""},
                             {"retry-after", "1"}, {"connection", "close"}, {"content-length", "5"},
                             {"transfer-encoding", "chunked"}, {"keep-alive", "x"}, {"proxy-authenticate", "x"},
                             {"upgrade", "h2c"}, {"server", "Boost.Beast"}, {"date", "now"}});
  std::map<std::string, std::string> kept(out.begin(), out.end());
  EXPECT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept.at("x-content-sha256"), "ab");
  EXPECT_EQ(kept.at("retry-after"), "1");
}

TEST(ForwardMessage, TimeoutCoversTheWaitTheRequestAsksFor) {
  api::HttpRequest r;
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 60'000);
  r.query = {{"wait_s", "30"}};
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 90'000);
  r.query = {{"wait_s", "99999"}};  // not a wait the node accepts: no extension
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 60'000);
  r.query.clear();
  r.body = R"({"code":"1","wait_s":120})";
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 180'000);
  r.body = R"({"wait_s":1000000})";
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 360'000);  // capped at 300 s
  r.body = "{\"a\":" + std::string(100000, '[');     // hostile nesting: no extension, no crash
  EXPECT_EQ(forward_timeout_ms(r, 60'000), 60'000);
}

}  // namespace
}  // namespace airlock::cluster
