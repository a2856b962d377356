// The sandbox's proxy requests are hostile input: parsing either yields a
// request whose path means what the upstream will serve, or a clear refusal.
#include <gtest/gtest.h>

#include "egress/proxy_request.h"
#include "egress/resolver.h"
#include "egress/scrub.h"
#include "egress/secrets.h"

using namespace airlock::egress;

namespace {
std::string error_of(const std::string& head) {
  auto r = parse_proxy_request(head);
  return r ? "" : r.error().what;
}
}  // namespace

TEST(EgressProxyRequest, ParsesConnectAndAbsoluteForm) {
  auto c = parse_proxy_request("CONNECT API.Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(c) << c.error().what;
  EXPECT_TRUE(c->connect());
  EXPECT_EQ(c->host, "api.example.com");
  EXPECT_EQ(c->port, 443);
  auto v6 = parse_proxy_request("CONNECT [fd00::2]:8443 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fd00::2");
  auto g = parse_proxy_request("POST http://data.example.com:8080/v1/items?x=1 HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
  ASSERT_TRUE(g) << g.error().what;
  EXPECT_EQ(g->method, "POST");
  EXPECT_EQ(g->port, 8080);
  EXPECT_EQ(g->target, "/v1/items?x=1");
  EXPECT_EQ(g->path(), "/v1/items");
  EXPECT_EQ(g->content_length, 5u);
  auto bare = parse_proxy_request("GET http://a.com HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->port, 80);
  EXPECT_EQ(bare->target, "/");
}

TEST(EgressProxyRequest, RefusesWhatCouldMisleadARule) {
  EXPECT_NE(error_of("GET /x HTTP/1.1\r\n\r\n").find("full URL"), std::string::npos);
  EXPECT_NE(error_of("GET https://a.com/ HTTP/1.1\r\n\r\n").find("CONNECT"), std::string::npos);
  EXPECT_NE(error_of("GET http://user@a.com/ HTTP/1.1\r\n\r\n").find("user info"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/v1/../admin HTTP/1.1\r\n\r\n").find("dot segments"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/v1/%2e%2e/admin HTTP/1.1\r\n\r\n").find("encoded"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/v1%2fadmin HTTP/1.1\r\n\r\n").find("encoded"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com//admin HTTP/1.1\r\n\r\n").find("empty path"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/a\\b HTTP/1.1\r\n\r\n").find("backslash"), std::string::npos);
  EXPECT_NE(error_of("POST http://a.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").find("Content-Length"),
            std::string::npos);
  EXPECT_NE(
      error_of("POST http://a.com/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
          .find("more than one Content-Length"),
      std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n").find("folded"), std::string::npos);
  EXPECT_NE(error_of("CONNECT a.com HTTP/1.1\r\n\r\n").find("HOST:PORT"), std::string::npos);
  EXPECT_NE(error_of("CONNECT a.com:0 HTTP/1.1\r\n\r\n").find("port"), std::string::npos);
  EXPECT_NE(error_of("CONNECT a.com:99999 HTTP/1.1\r\n\r\n").find("port"), std::string::npos);
  EXPECT_NE(error_of("GET http://a_b!.com/ HTTP/1.1\r\n\r\n").find("host name"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/ HTTP/2\r\n\r\n").find("HTTP/1"), std::string::npos);
  EXPECT_NE(error_of("GET http://a.com/ HTTP/1.1\r\n").find("incomplete"), std::string::npos);
  std::string many = "GET http://a.com/ HTTP/1.1\r\n";
  for (int i = 0; i < 200; ++i) many += "X" + std::to_string(i) + ": y\r\n";
  EXPECT_NE(error_of(many + "\r\n").find("too many"), std::string::npos);
}

TEST(EgressProxyRequest, UpstreamHeadDropsHopByHopAndAddsTheCredential) {
  auto r = parse_proxy_request(
      "GET http://api.example.com/v1/x HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: a\r\n"
      "Connection: keep-alive, X-Drop\r\nX-Drop: 1\r\nAuthorization: forged\r\nAccept-Encoding: gzip\r\n"
      "User-Agent: t\r\n\r\n");
  ASSERT_TRUE(r) << r.error().what;
  std::string plain = upstream_head(*r, std::nullopt);
  EXPECT_EQ(plain.rfind("GET /v1/x HTTP/1.1\r\nHost: api.example.com\r\n", 0), 0u) << plain;
  EXPECT_EQ(plain.find("evil.example"), std::string::npos);
  EXPECT_EQ(plain.find("Proxy-Authorization"), std::string::npos);
  EXPECT_EQ(plain.find("X-Drop"), std::string::npos);
  EXPECT_NE(plain.find("User-Agent: t\r\n"), std::string::npos);
  EXPECT_NE(plain.find("Connection: close\r\n\r\n"), std::string::npos);
  std::string with = upstream_head(*r, Credential{"Authorization", "Bearer s3cret"});
  EXPECT_EQ(with.find("forged"), std::string::npos);  // the code cannot choose the credential
  EXPECT_NE(with.find("Authorization: Bearer s3cret\r\n"), std::string::npos);
  EXPECT_NE(with.find("Accept-Encoding: identity\r\n"), std::string::npos);
  EXPECT_EQ(with.find("gzip"), std::string::npos);
}

// Request smuggling: anything that could make the upstream see a request
// boundary where the gateway saw none is refused with the reason.
TEST(EgressProxyRequest, RefusesWhatTheUpstreamCouldFrameDifferently) {
  const std::string line = "POST http://a.com/ok HTTP/1.1\r\n";
  struct Case {
    std::string head, reason;
  } cases[] = {
      {line + "Content-Length: 5\r\nConnection: Content-Length\r\n\r\n",
       "Connection names Content-Length"},
      {line + "Content-Length: 5\r\nConnection: keep-alive, content-length\r\n\r\n",
       "Connection names content-length"},
      {line + "Content-Length: 5\r\nConnection: Transfer-Encoding\r\n\r\n",
       "Connection names Transfer-Encoding"},
      {line + "Connection: Host\r\n\r\n", "Connection names Host"},
      {line + "Connection: Content_Length\r\n\r\n", "Connection names Content_Length"},
      {line + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "Transfer-Encoding"},
      {line + "Transfer-Encoding: chunked, identity\r\n\r\n", "Transfer-Encoding"},
      {line + "Transfer-Encoding: identity\r\n\r\n", "Transfer-Encoding"},
      {line + "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", "more than one Content-Length"},
      {line + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "more than one Content-Length"},
      {line + "Content-Length: 5, 5\r\n\r\n", "bad Content-Length"},
      {line + "Content-Length: +5\r\n\r\n", "bad Content-Length"},
      {line + "Content-Length: 0x5\r\n\r\n", "bad Content-Length"},
      {line + "Content-Length: 99999999999999999999\r\n\r\n", "bad Content-Length"},
      {line + "Content_Length: 5\r\n\r\n", "would be read as content-length"},
      {line + "Transfer_Encoding: chunked\r\n\r\n", "would be read as transfer-encoding"},
      {line + "Content-Length : 5\r\n\r\n", "malformed header line"},
      {line + " Content-Length: 5\r\n\r\n", "folded"},
      {line + "X: a\r\n\tContent-Length: 5\r\n\r\n", "folded"},
      {line + "X: a\nContent-Length: 5\r\n\r\n", "bare LF"},
      {line + "X: a\rContent-Length: 5\r\n\r\n", "bare CR"},
      {"POST http://a.com/ok HTTP/1.1\nContent-Length: 5\r\n\r\n", "bare LF"},
      {line + std::string("X: a\0b\r\n\r\n", 10), "NUL"},
      {line + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n", "Upgrade"},
      {line + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n", "Upgrade"},
      {line + "Expect: 200-ok\r\n\r\n", "Expect: 200-ok is not supported"},
      {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "only HTTP/1.0 and HTTP/1.1"},
      {"\r\n" + line + "\r\n", "malformed request line"},
      {"CONNECT a.com:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\n", "CONNECT with a body"},
  };
  for (const auto& c : cases) {
    std::string error = error_of(c.head);
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.head << " -> '" << error << "'";
  }
}

TEST(EgressProxyRequest, LineEndsAreCheckedBeforeTheHeadIsComplete) {
  EXPECT_TRUE(check_line_ends("GET http://a.com/ HTTP/1.1\r\nX: y\r"));  // the LF may still come
  EXPECT_FALSE(check_line_ends("GET http://a.com/ HTTP/1.1\nX"));
  EXPECT_FALSE(check_line_ends("GET http://a.com/ HTTP/1.1\r\r\n"));
  EXPECT_FALSE(check_line_ends(std::string("GET \0", 5)));
}

TEST(EgressProxyRequest, TheUpstreamGetsTheGatewaysFramingOnly) {
  auto r = parse_proxy_request(
      "POST http://a.com/ok HTTP/1.1\r\nHost: evil\r\nContent-Length: 007\r\nExpect: "
      "100-continue\r\n"
      "Connection: TE, X-Drop, Proxy_Authorization\r\nTE: trailers\r\nX-Drop: 1\r\nX_Drop: 2\r\n"
      "Proxy_Authorization: forged\r\nKeep_Alive: 5\r\nX-Keep: 1\r\n\r\n");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_TRUE(r->expect_continue);
  EXPECT_EQ(r->content_length, 7u);
  EXPECT_EQ(upstream_head(*r, std::nullopt),
            "POST /ok HTTP/1.1\r\nHost: a.com\r\nContent-Length: 7\r\nX-Keep: 1\r\nConnection: "
            "close\r\n\r\n");
  auto none = parse_proxy_request("GET http://a.com/ HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->version, "HTTP/1.0");
  EXPECT_EQ(upstream_head(*none, std::nullopt),
            "GET / HTTP/1.1\r\nHost: a.com\r\nConnection: close\r\n\r\n");
  // A header spelled with '_' cannot stand in for the credential either.
  auto spoof = parse_proxy_request("GET http://a.com/ HTTP/1.1\r\nX_Api_Key: mine\r\n\r\n");
  ASSERT_TRUE(spoof);
  std::string with = upstream_head(*spoof, Credential{"X-Api-Key", "k3y"});
  EXPECT_EQ(with.find("mine"), std::string::npos) << with;
  EXPECT_NE(with.find("X-Api-Key: k3y\r\n"), std::string::npos);
}

// Found by fuzz/proxy_request.cc (fuzz/corpus/proxy_request/connection_names_content_length):
// a Connection token naming Content-Length made the gateway drop it while
// still forwarding the body, so the upstream read the body as a second
// request the policy never judged. Such a request is now refused whole.
TEST(EgressProxyRequest, ConnectionTokensNeverDropTheBodysContentLength) {
  auto r = parse_proxy_request(
      "POST http://api.example.com/v1/ok HTTP/1.1\r\nContent-Length: 38\r\n"
      "Connection: keep-alive, Content-Length\r\n\r\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("Connection names Content-Length"), std::string::npos) << r.error().what;
}

TEST(EgressProxyRequest, GatewayResponseIsOneLineWithTheReason) {
  std::string r = gateway_response(403, "x.com:80 is not in the job's network policy\r\nInjected: 1");
  EXPECT_EQ(r.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u);
  EXPECT_EQ(r.find("\r\nInjected"), std::string::npos);
  EXPECT_NE(r.find("airlock egress: x.com:80 is not in the job's network policy"), std::string::npos);
}

TEST(EgressScrub, ReplacesTheSecretAcrossReadBoundaries) {
  Scrubber s("TOKEN123");
  std::string out = s.feed("abc TOK");
  out += s.feed("EN123 def TOKEN");
  out += s.feed("12");
  out += s.feed("3");
  out += s.finish();
  EXPECT_EQ(out, "abc ******** def ********");
  Scrubber none("");
  EXPECT_EQ(none.feed("plain"), "plain");
  Scrubber partial("abc");
  std::string head = partial.feed("xxab");
  EXPECT_EQ(head, "xx");  // "ab" could start the secret: held back
  EXPECT_EQ(head + partial.finish(), "xxab");
}

TEST(EgressSecrets, ParsesTablesAndNeverEchoesAValue) {
  auto s = parse_secrets("[api]\nvalue = \"Bearer t0k\"\n[other]\nheader = \"X-Api-Key\"\nvalue = \"k\"\n");
  ASSERT_TRUE(s) << s.error().what;
  EXPECT_EQ(s->at("api").header, "Authorization");
  EXPECT_EQ(s->at("api").value, "Bearer t0k");
  EXPECT_EQ(s->at("other").header, "X-Api-Key");
  auto bad = parse_secrets("[api]\nvalue = \"Bearer t0k\nbroken");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().what.find("t0k"), std::string::npos);
  EXPECT_FALSE(parse_secrets("[api]\nheader = \"Authorization\"\n"));            // no value
  EXPECT_FALSE(parse_secrets("[api]\nvalue = \"a\"\nheader = \"Bad Header\"\n"));  // not a token
  EXPECT_FALSE(parse_secrets("[api]\nvalue = \"a\\r\\nX: y\"\n"));               // header injection
  EXPECT_FALSE(parse_secrets("[api]\nvalue = \"a\"\nextra = 1\n"));
}

TEST(EgressResolver, OverridesParseAndAreCheckedLikeDns) {
  auto h = parse_host_overrides("# test hosts\n10.1.2.3 api.test Other.Test\n127.0.0.1 sneaky.test\nfd00::5 v6.test\n");
  ASSERT_TRUE(h) << h.error().what;
  EXPECT_EQ(h->at("other.test"), std::vector<std::string>{"10.1.2.3"});
  EXPECT_FALSE(parse_host_overrides("not-an-ip name\n"));
  EXPECT_FALSE(parse_host_overrides("10.0.0.1\n"));
  Rule strict{"sneaky.test", 80};
  auto r = resolve_checked(*h, strict, "sneaky.test");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->addresses.empty());  // rebinding to loopback: refused
  EXPECT_NE(r->reason.find("loopback"), std::string::npos);
  Rule open = strict;
  open.allow_private = true;
  auto ok = resolve_checked(*h, open, "sneaky.test");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->addresses, std::vector<std::string>{"127.0.0.1"});
  auto literal = resolve_checked(*h, strict, "169.254.169.254");  // cloud metadata
  ASSERT_TRUE(literal);
  EXPECT_TRUE(literal->addresses.empty());
  EXPECT_NE(literal->reason.find("link-local"), std::string::npos);
}
