// Request targets, percent-decoding, query strings, route patterns and
// precedence, SSE framing: the pure half of the HTTP layer.
#include "http/routing.h"

#include <gtest/gtest.h>

#include <string>

namespace airlock::api {
namespace {

TEST(HttpRoutingTest, PercentDecode) {
  EXPECT_EQ(percent_decode("plain"), "plain");
  EXPECT_EQ(percent_decode("a%20b%2fc%2Fd"), "a b/c/d");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("%e2%9C%93"), "\xe2\x9c\x93");
  EXPECT_EQ(percent_decode("%00"), std::string("\0", 1));
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("%"), std::nullopt);
  EXPECT_EQ(percent_decode("ab%"), std::nullopt);
  EXPECT_EQ(percent_decode("ab%4"), std::nullopt);
  EXPECT_EQ(percent_decode("%G0"), std::nullopt);
  EXPECT_EQ(percent_decode("%0g"), std::nullopt);
}

TEST(HttpRoutingTest, QueryLastWinsAndDecodes) {
  auto q = parse_query("a=1&b=x%20y&a=2&c=p+q&flag&&empty=&e%3Dq=v%26w");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->size(), 6u);
  EXPECT_EQ(q->at("a"), "2");
  EXPECT_EQ(q->at("b"), "x y");
  EXPECT_EQ(q->at("c"), "p q");
  EXPECT_EQ(q->at("flag"), "");
  EXPECT_EQ(q->at("empty"), "");
  EXPECT_EQ(q->at("e=q"), "v&w");
  EXPECT_TRUE(parse_query("")->empty());
  EXPECT_FALSE(parse_query("a=%zz").has_value());
  EXPECT_FALSE(parse_query("a=%00").has_value());
  EXPECT_FALSE(parse_query("%00=x").has_value());
}

TEST(HttpRoutingTest, TargetSplitsPathAndQuery) {
  auto t = parse_target("/v1/jobs/ab%20c/events?offset=10&x=%2F");
  ASSERT_TRUE(t.has_value()) << t.error().what;
  EXPECT_EQ(t->path, "/v1/jobs/ab c/events");
  EXPECT_EQ(t->segments, (std::vector<std::string>{"v1", "jobs", "ab c", "events"}));
  EXPECT_EQ(t->query.at("offset"), "10");
  EXPECT_EQ(t->query.at("x"), "/");  // '/' is fine in a query value

  auto root = parse_target("/");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->segments, (std::vector<std::string>{""}));
  auto trailing = parse_target("/a/");
  ASSERT_TRUE(trailing.has_value());
  EXPECT_EQ(trailing->segments, (std::vector<std::string>{"a", ""}));
  auto fragment = parse_target("/a?x=1#frag");
  ASSERT_TRUE(fragment.has_value());
  EXPECT_EQ(fragment->query.at("x"), "1");
}

TEST(HttpRoutingTest, TargetRefusesHostileForms) {
  EXPECT_FALSE(parse_target("").has_value());
  EXPECT_FALSE(parse_target("v1/jobs").has_value());
  EXPECT_FALSE(parse_target("http://example.invalid/v1").has_value());
  EXPECT_FALSE(parse_target("*").has_value());
  EXPECT_FALSE(parse_target("/a%00b").has_value());
  EXPECT_FALSE(parse_target("/a%2Fb").has_value());   // an encoded '/' never hides in a segment
  EXPECT_FALSE(parse_target("/a%2fb").has_value());
  EXPECT_FALSE(parse_target("/a%zz").has_value());
  EXPECT_FALSE(parse_target("/a?q=%00").has_value());
  EXPECT_EQ(parse_target("/a%00b").error().what, "NUL byte in the path");
  EXPECT_EQ(parse_target("/a%2Fb").error().what, "encoded '/' in a path segment");
}

TEST(HttpRoutingTest, PatternParse) {
  EXPECT_TRUE(RoutePattern::parse("/").has_value());
  EXPECT_TRUE(RoutePattern::parse("/v1/jobs/{id}/events").has_value());
  EXPECT_TRUE(RoutePattern::parse("/v1/{a}/{b_2}").has_value());
  EXPECT_FALSE(RoutePattern::parse("").has_value());
  EXPECT_FALSE(RoutePattern::parse("v1").has_value());
  EXPECT_FALSE(RoutePattern::parse("/v1/{}").has_value());
  EXPECT_FALSE(RoutePattern::parse("/v1/{id").has_value());
  EXPECT_FALSE(RoutePattern::parse("/v1/x{id}").has_value());
  EXPECT_FALSE(RoutePattern::parse("/v1/{i-d}").has_value());
  EXPECT_FALSE(RoutePattern::parse("/v1/{id}/{id}").has_value());
}

TEST(HttpRoutingTest, PatternMatch) {
  auto p = RoutePattern::parse("/v1/jobs/{id}/events");
  ASSERT_TRUE(p.has_value());
  auto m = p->match({"v1", "jobs", "j 1", "events"});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->at("id"), "j 1");
  EXPECT_FALSE(p->match({"v1", "jobs", "", "events"}).has_value());  // empty param
  EXPECT_FALSE(p->match({"v1", "jobs", "x"}).has_value());
  EXPECT_FALSE(p->match({"v1", "jobs", "x", "events", ""}).has_value());
  EXPECT_FALSE(p->match({"v1", "Jobs", "x", "events"}).has_value());  // case matters
}

TEST(HttpRoutingTest, TableFindsNotFoundAndMethodNotAllowed) {
  RouteTable table;
  ASSERT_EQ(table.add("GET", "/v1/jobs").value(), 0u);
  ASSERT_EQ(table.add("POST", "/v1/jobs").value(), 1u);
  ASSERT_EQ(table.add("GET", "/v1/jobs/{id}").value(), 2u);
  ASSERT_EQ(table.add("DELETE", "/v1/jobs/{id}").value(), 3u);
  EXPECT_FALSE(table.add("GET", "/v1/jobs").has_value());  // duplicate
  EXPECT_FALSE(table.add("GET", "/bad/{").has_value());

  auto found = table.find("GET", {"v1", "jobs", "abc"});
  EXPECT_EQ(found.outcome, RouteTable::Outcome::kFound);
  EXPECT_EQ(found.index, 2u);
  EXPECT_EQ(found.params.at("id"), "abc");

  auto post = table.find("POST", {"v1", "jobs"});
  EXPECT_EQ(post.outcome, RouteTable::Outcome::kFound);
  EXPECT_EQ(post.index, 1u);

  auto wrong = table.find("PUT", {"v1", "jobs", "abc"});
  EXPECT_EQ(wrong.outcome, RouteTable::Outcome::kMethodNotAllowed);
  EXPECT_EQ(wrong.allow, "DELETE, GET");

  EXPECT_EQ(table.find("GET", {"v1", "nothing"}).outcome, RouteTable::Outcome::kNotFound);
  EXPECT_EQ(table.find("GET", {"v1", "jobs", ""}).outcome, RouteTable::Outcome::kNotFound);
}

TEST(HttpRoutingTest, LiteralSegmentsWinOverParameters) {
  RouteTable table;
  ASSERT_TRUE(table.add("GET", "/v1/jobs/{id}").has_value());
  ASSERT_TRUE(table.add("GET", "/v1/jobs/search").has_value());
  ASSERT_TRUE(table.add("GET", "/v1/{kind}/search").has_value());
  EXPECT_EQ(table.find("GET", {"v1", "jobs", "search"}).index, 1u);
  EXPECT_EQ(table.find("GET", {"v1", "jobs", "other"}).index, 0u);
  auto files = table.find("GET", {"v1", "files", "search"});
  EXPECT_EQ(files.index, 2u);
  EXPECT_EQ(files.params.at("kind"), "files");
}

TEST(HttpRoutingTest, EventFraming) {
  EXPECT_EQ(format_event("7", "stdout", "hello"), "id: 7\nevent: stdout\ndata: hello\n\n");
  EXPECT_EQ(format_event("", "", "a\nb\r\nc\rd"), "data: a\ndata: b\ndata: c\ndata: d\n\n");
  EXPECT_EQ(format_event("", "", ""), "data: \n\n");
  EXPECT_EQ(format_event("", "", "trailing\n"), "data: trailing\ndata: \n\n");
  // An id or event name cannot smuggle in a field or end the event early.
  EXPECT_EQ(format_event("1\n\ndata: x", "ev\r\nid: 9", "d"),
            "id: 1data: x\nevent: evid: 9\ndata: d\n\n");
}

TEST(HttpRoutingTest, Loggable) {
  EXPECT_EQ(loggable("/v1/jobs"), "/v1/jobs");
  EXPECT_EQ(loggable("a\nb%c\xff"), "a%0Ab%25c%FF");
  EXPECT_EQ(loggable(std::string(10, 'x'), 4), "xxxx...");
}

}  // namespace
}  // namespace airlock::api
