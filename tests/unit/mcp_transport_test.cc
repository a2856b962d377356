// The pure parts of the transports: stdio lines, the in-flight table that
// cancellations look up, the Origin/Host checks and `airlock mcp`'s options.
#include <gtest/gtest.h>

#include "mcp/in_flight.h"
#include "mcp/line_reader.h"
#include "mcp/origin_check.h"
#include "mcp/stdio_args.h"

namespace airlock::mcp {
namespace {

TEST(McpLineReader, SplitsLinesFedInAnyPieces) {
  LineReader r(100);
  r.feed("{\"a\":1}\n{\"b\"");
  auto first = r.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->text, "{\"a\":1}");
  EXPECT_FALSE(r.next());
  r.feed(":2}\r\n");
  EXPECT_EQ(r.next()->text, "{\"b\":2}");
  EXPECT_FALSE(r.next());
}

TEST(McpLineReader, AnOverlongLineIsReportedOnceAndNotKept) {
  LineReader r(10);
  r.feed("0123456789");  // exactly the bound: fine
  r.feed("\n");
  EXPECT_EQ(r.next()->text, "0123456789");
  r.feed("0123456789ab");
  r.feed(std::string(1 << 20, 'x'));  // still the same line
  EXPECT_FALSE(r.next());
  r.feed("yy\nok\n");
  auto over = r.next();
  ASSERT_TRUE(over);
  EXPECT_TRUE(over->too_long);
  EXPECT_TRUE(over->text.empty());
  EXPECT_EQ(r.next()->text, "ok");
  EXPECT_FALSE(r.next());
}

TEST(McpInFlight, CancelFindsOnlyTheSameClientsRequest) {
  InFlight calls(2);
  auto a = calls.add(in_flight_key("key1\ns1", 1));
  ASSERT_TRUE(a);
  EXPECT_FALSE(calls.add(in_flight_key("key1\ns1", 1)));       // the same id twice
  EXPECT_FALSE(calls.cancel(in_flight_key("key2\ns1", 1)));    // another key
  EXPECT_FALSE(calls.cancel(in_flight_key("key1\ns2", 1)));    // another MCP session
  EXPECT_FALSE(calls.cancel(in_flight_key("key1\ns1", "1")));  // "1" is not 1
  EXPECT_FALSE(a->load());
  EXPECT_TRUE(calls.cancel(in_flight_key("key1\ns1", 1)));
  EXPECT_TRUE(a->load());
  auto b = calls.add(in_flight_key("", 2));
  ASSERT_TRUE(b);
  EXPECT_FALSE(calls.add(in_flight_key("", 3)));  // at the cap
  calls.remove(in_flight_key("key1\ns1", 1));
  EXPECT_FALSE(calls.cancel(in_flight_key("key1\ns1", 1)));
  calls.cancel_all();
  EXPECT_TRUE(b->load());
}

TEST(McpOrigin, LoopbackOriginsAndHostsOnly) {
  EXPECT_TRUE(origin_allowed(""));
  EXPECT_TRUE(origin_allowed("http://localhost:5173"));
  EXPECT_TRUE(origin_allowed("http://127.0.0.1"));
  EXPECT_TRUE(origin_allowed("https://[::1]:8443"));
  EXPECT_TRUE(origin_allowed("HTTP://LOCALHOST"));
  EXPECT_FALSE(origin_allowed("http://evil.example.com"));
  EXPECT_FALSE(origin_allowed("http://localhost.evil.example.com"));
  EXPECT_FALSE(origin_allowed("http://127.0.0.1.evil.example.com"));
  EXPECT_FALSE(origin_allowed("http://localhost@evil.example.com"));
  EXPECT_FALSE(origin_allowed("null"));
  EXPECT_FALSE(origin_allowed("file://"));
  EXPECT_FALSE(origin_allowed("http://localhost:99999"));
  EXPECT_TRUE(host_allowed("127.0.0.1:8470", true));
  EXPECT_TRUE(host_allowed("localhost", true));
  EXPECT_FALSE(host_allowed("evil.example.com", true));
  EXPECT_FALSE(host_allowed("evil.example.com:8470", true));
  EXPECT_FALSE(host_allowed("", true));
  EXPECT_TRUE(host_allowed("airlock.internal:8470", false));
}

TEST(McpStdioArgs, RefusesAKeyOnTheCommandLine) {
  for (const char* opt : {"--key", "--api-key", "--token", "--key=alk_x"}) {
    auto a = parse_stdio_args({opt, "alk_secret"});
    ASSERT_FALSE(a) << opt;
    EXPECT_NE(a.error().what.find("never give the API key on the command line"), std::string::npos);
  }
  auto ok = parse_stdio_args(
      {"--url", "http://127.0.0.1:9", "--key-file=/k", "--event-keepalive-ms", "100"});
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok->url, "http://127.0.0.1:9");
  EXPECT_EQ(*ok->key_file, "/k");
  EXPECT_EQ(ok->event_keepalive_ms, 100);
  EXPECT_FALSE(parse_stdio_args({"--url"}));
  EXPECT_FALSE(parse_stdio_args({"--event-keepalive-ms", "10"}));
  EXPECT_FALSE(parse_stdio_args({"--verbose"}));
}

}  // namespace
}  // namespace airlock::mcp
