#include "egress/policy.h"

#include <gtest/gtest.h>

using namespace airlock::egress;
using nlohmann::json;

TEST(EgressPolicy, ParsesAllowFlags) {
  auto r = parse_allow("API.Example.com:443");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->host, "api.example.com");
  EXPECT_EQ(r->port, 443);
  EXPECT_TRUE(parse_allow("*.example.com:8080").has_value());
  for (const char* bad : {"example.com", "example.com:0", "example.com:70000", ":443", "exa mple.com:80",
                          "a..b:80", "*.:80", "example.com:8o", "-x.com:80x"})
    EXPECT_FALSE(parse_allow(bad).has_value()) << bad;
}

TEST(EgressPolicy, WildcardsMatchSubdomainsOnly) {
  EXPECT_TRUE(host_matches("*.example.com", "a.example.com"));
  EXPECT_TRUE(host_matches("*.example.com", "A.B.Example.COM"));
  EXPECT_FALSE(host_matches("*.example.com", "example.com"));
  EXPECT_FALSE(host_matches("*.example.com", "evilexample.com"));
  EXPECT_FALSE(host_matches("*.example.com", "example.com.evil.net"));
  EXPECT_TRUE(host_matches("api.example.com", "API.example.com"));
  EXPECT_FALSE(host_matches("api.example.com", "api.example.com.evil.net"));
}

TEST(EgressPolicy, DecidesOnHostPortMethodAndPath) {
  auto p = parse_policy(json::array({{{"host", "api.example.com"}, {"port", 443}, {"methods", {"GET", "CONNECT"}}},
                                     {{"host", "data.example.com"}, {"port", 80}, {"paths", {"/v1/"}}}}));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_TRUE(decide(*p, {"api.example.com", 443, "CONNECT", ""}).allowed);
  EXPECT_FALSE(decide(*p, {"api.example.com", 443, "POST", "/x"}).allowed);
  EXPECT_FALSE(decide(*p, {"api.example.com", 80, "GET", "/"}).allowed);  // another port
  EXPECT_TRUE(decide(*p, {"data.example.com", 80, "GET", "/v1/items"}).allowed);
  auto path = decide(*p, {"data.example.com", 80, "GET", "/admin"});
  EXPECT_FALSE(path.allowed);
  EXPECT_NE(path.reason.find("/admin"), std::string::npos);
  auto other = decide(*p, {"evil.example.net", 443, "CONNECT", ""});
  EXPECT_FALSE(other.allowed);
  EXPECT_NE(other.reason.find("not in the job's network policy"), std::string::npos);
  EXPECT_FALSE(decide(Policy{}, {"api.example.com", 443, "GET", "/"}).allowed);  // no rules: no network
}

TEST(EgressPolicy, RefusesMalformedRules) {
  for (const json& bad : {json("x"), json::array({1}), json::array({{{"host", "a.com"}}}),
                          json::array({{{"host", "a.com"}, {"port", 80}, {"extra", 1}}}),
                          json::array({{{"host", "a.com"}, {"port", 80}, {"methods", {"BREW"}}}}),
                          json::array({{{"host", "a.com"}, {"port", 80}, {"paths", {"v1"}}}}),
                          json::array({{{"host", "a.com"}, {"port", 80}, {"secret", ""}}}),
                          json::array({{{"host", "a.com"}, {"port", -1}}})})
    EXPECT_FALSE(parse_policy(bad).has_value()) << bad.dump();
  EXPECT_TRUE(parse_policy(json(nullptr))->rules.empty());
}

TEST(EgressPolicy, ClassifiesAddresses) {
  struct Case {
    const char* ip;
    AddressClass c;
  };
  for (const Case& c : std::vector<Case>{{"93.184.216.34", AddressClass::kPublic},
                                         {"127.0.0.1", AddressClass::kLoopback},
                                         {"127.8.9.10", AddressClass::kLoopback},
                                         {"10.1.2.3", AddressClass::kPrivate},
                                         {"172.16.0.1", AddressClass::kPrivate},
                                         {"172.32.0.1", AddressClass::kPublic},
                                         {"192.168.1.1", AddressClass::kPrivate},
                                         {"100.64.0.1", AddressClass::kPrivate},
                                         {"169.254.169.254", AddressClass::kLinkLocal},
                                         {"0.0.0.0", AddressClass::kUnspecified},
                                         {"224.0.0.1", AddressClass::kMulticast},
                                         {"192.0.2.1", AddressClass::kReserved},
                                         {"::1", AddressClass::kLoopback},
                                         {"::", AddressClass::kUnspecified},
                                         {"fd00::1", AddressClass::kPrivate},
                                         {"fe80::1", AddressClass::kLinkLocal},
                                         {"::ffff:127.0.0.1", AddressClass::kLoopback},
                                         {"::ffff:10.0.0.1", AddressClass::kPrivate},
                                         {"2001:db8::1", AddressClass::kReserved},
                                         {"2606:4700::1", AddressClass::kPublic}}) {
    auto got = classify_address(c.ip);
    ASSERT_TRUE(got.has_value()) << c.ip;
    EXPECT_EQ(*got, c.c) << c.ip << " is " << class_name(*got);
  }
  EXPECT_FALSE(classify_address("localhost").has_value());
  EXPECT_FALSE(classify_address("1.2.3").has_value());
}

TEST(EgressPolicy, ANameResolvingToThePrivateNetworkIsRefusedUnlessNamed) {
  Rule rule = *parse_allow("api.example.com:443");
  auto rebinding = check_address(rule, "127.0.0.1");
  EXPECT_FALSE(rebinding.allowed);
  EXPECT_NE(rebinding.reason.find("loopback"), std::string::npos);
  EXPECT_FALSE(check_address(rule, "169.254.169.254").allowed);  // cloud metadata
  EXPECT_FALSE(check_address(rule, "::ffff:192.168.0.1").allowed);
  EXPECT_TRUE(check_address(rule, "93.184.216.34").allowed);
  rule.allow_private = true;
  EXPECT_TRUE(check_address(rule, "10.0.0.5").allowed);
  EXPECT_FALSE(check_address(rule, "0.0.0.0").allowed);
}

TEST(EgressPolicy, ConnectCannotBypassPathsOrCredentials) {
  auto p = parse_policy(json::array({{{"host", "data.example.com"}, {"port", 443}, {"paths", {"/v1/"}}},
                                     {{"host", "api.example.com"}, {"port", 443}, {"secret", "api"}, {"tls", true}}}));
  ASSERT_TRUE(p.has_value()) << p.error().message();
  auto paths = decide(*p, {"data.example.com", 443, "CONNECT", ""});
  EXPECT_FALSE(paths.allowed);
  EXPECT_NE(paths.reason.find("must see each request"), std::string::npos);
  EXPECT_FALSE(decide(*p, {"api.example.com", 443, "CONNECT", ""}).allowed);
  EXPECT_TRUE(decide(*p, {"api.example.com", 443, "GET", "/"}).allowed);
  EXPECT_TRUE(p->rules[1].tls);
  EXPECT_EQ(rule_json(p->rules[1]), json({{"host", "api.example.com"}, {"port", 443}, {"secret", "api"}, {"tls", true}}));
}
