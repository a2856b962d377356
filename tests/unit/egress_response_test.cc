// What the code reads back from an upstream that got the credential
// (egress/scrub.h, egress/response_filter.h): the secret never gets through,
// whole, as its bare token or as any piece of kMinFragment bytes, wherever
// the upstream's chunks and the reads split it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "egress/response_filter.h"
#include "egress/scrub.h"

using namespace airlock::egress;

namespace {

const std::string kToken = "sk-live-5f2c9a1e7b3d4f60a8c2e9b1d7f3a5c0";
const std::string kValue = "Bearer " + kToken;

// The first piece of the token, kMinFragment bytes or longer, found in `text`.
std::string leaked_piece(const std::string& text, const std::string& token = kToken) {
  for (size_t at = 0; at + kMinFragment <= token.size(); ++at)
    if (text.find(token.substr(at, kMinFragment)) != std::string::npos)
      return token.substr(at, kMinFragment);
  return "";
}

// The body of a chunked message, or "" with ok = false when it is malformed.
std::string dechunk(std::string_view body, bool& ok) {
  std::string out;
  ok = false;
  for (;;) {
    auto eol = body.find("\r\n");
    if (eol == std::string_view::npos) return out;
    size_t n = std::stoul(std::string(body.substr(0, eol)), nullptr, 16);
    body.remove_prefix(eol + 2);
    if (n == 0) {
      ok = body == "\r\n";
      return out;
    }
    if (body.size() < n + 2 || body.substr(n, 2) != "\r\n") return out;
    out += body.substr(0, n);
    body.remove_prefix(n + 2);
  }
}

std::string chunked(const std::vector<std::string>& pieces, const std::string& trailer = "") {
  std::string out;
  for (const auto& p : pieces) {
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", p.size());
    out += size + p + "\r\n";
  }
  return out + "0\r\n" + trailer + "\r\n";
}

struct Filtered {
  std::string out, error;
};

// Feeds `raw` in the given pieces, then the end of the stream.
Filtered run(const std::vector<std::string>& pieces, bool head = false, bool http10 = false) {
  ResponseFilter f(kValue, head, http10);
  Filtered r;
  for (const auto& p : pieces) {
    auto out = f.feed(p);
    if (!out) return {r.out, out.error().what};
    r.out += *out;
  }
  auto tail = f.finish();
  if (!tail) return {r.out, tail.error().what};
  r.out += *tail;
  return r;
}

std::string stars(size_t n) { return std::string(n, '*'); }

}  // namespace

TEST(EgressScrub, CatchesTheValueTheTokenAndEveryLongEnoughPiece) {
  Scrubber s(kValue);
  EXPECT_EQ(s.scrub_all("a " + kValue + " b"), "a " + stars(kValue.size()) + " b");
  EXPECT_EQ(s.scrub_all("token=" + kToken + ";"), "token=" + stars(kToken.size()) + ";");
  // Every piece of at least kMinFragment bytes, wherever it starts.
  for (size_t at = 0; at + kMinFragment <= kToken.size(); ++at)
    for (size_t len = kMinFragment; at + len <= kToken.size(); ++len) {
      std::string piece = kToken.substr(at, len);
      EXPECT_EQ(s.scrub_all("<" + piece + ">"), "<" + stars(len) + ">") << piece;
    }
  // Shorter pieces are left alone (the documented threshold), and so is text
  // that only shares the scheme.
  std::string short_piece = kToken.substr(3, kMinFragment - 1);
  EXPECT_EQ(s.scrub_all("<" + short_piece + ">"), "<" + short_piece + ">");
  EXPECT_EQ(s.scrub_all("WWW-Authenticate: Bearer error=\"invalid_token\""),
            "WWW-Authenticate: Bearer error=\"invalid_token\"");
}

TEST(EgressScrub, TheSameWhereverTheReadsSplitTheStream) {
  const std::string text = "{\"a\": \"" + kValue + "\", \"b\": \"" + kToken + "\", \"c\": \"" +
                           kToken.substr(5, 12) + "\", \"d\": \"" + kToken.substr(0, 9) +
                           kToken.substr(0, 9) + "\"}";
  Scrubber whole(kValue);
  const std::string want = whole.scrub_all(text);
  EXPECT_EQ(leaked_piece(want), "");
  for (size_t cut = 0; cut <= text.size(); ++cut)
    for (size_t cut2 = cut; cut2 <= text.size(); cut2 += 7) {
      Scrubber s(kValue);
      std::string got = s.feed(text.substr(0, cut));
      got += s.feed(text.substr(cut, cut2 - cut));
      got += s.feed(text.substr(cut2));
      got += s.finish();
      ASSERT_EQ(got, want) << "cut at " << cut << " and " << cut2;
    }
  Scrubber bytewise(kValue);
  std::string got;
  for (char c : text) got += bytewise.feed(std::string_view(&c, 1));
  EXPECT_EQ(got + bytewise.finish(), want);
}

TEST(EgressScrub, HoldsBackOnlyWhatCouldStartAMatch) {
  Scrubber s(kValue);
  EXPECT_EQ(s.feed("data: {\"x\": 1}\n\n"), "data: {\"x\": 1}\n\n");  // a stream is not delayed
  EXPECT_EQ(s.feed("tail sk-li"), "tail ");
  EXPECT_EQ(s.finish(), "sk-li");
  Scrubber short_token("Bearer abc");
  EXPECT_EQ(short_token.scrub_all("abc Bearer abc"), "*** **********");
  Scrubber none("");
  EXPECT_EQ(none.feed("plain"), "plain");
}

TEST(EgressResponse, AChunkedEchoIsScrubbedWhereverTheChunksSplitTheSecret) {
  const std::string body = "{\"Authorization\": \"" + kValue + "\", \"token\": \"" + kToken + "\"}";
  const std::string clean = "{\"Authorization\": \"" + stars(kValue.size()) + "\", \"token\": \"" +
                            stars(kToken.size()) + "\"}";
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  size_t secret_at = body.find(kValue);
  for (size_t k = 0; k <= kValue.size(); ++k) {
    // Chunk boundary k bytes into the secret; the raw stream is also split there.
    std::string raw = head + chunked({body.substr(0, secret_at + k), body.substr(secret_at + k)});
    for (size_t cut : {size_t{0}, head.size() + 3, head.size() + secret_at + k, raw.size() - 3}) {
      auto r = run({raw.substr(0, cut), raw.substr(cut)});
      ASSERT_EQ(r.error, "") << k;
      EXPECT_EQ(leaked_piece(r.out), "") << "split at " << k << ", read cut at " << cut;
      auto body_at = r.out.find("\r\n\r\n");
      ASSERT_NE(body_at, std::string::npos);
      EXPECT_EQ(
          r.out.substr(0, body_at + 4),
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
          "Connection: close\r\n\r\n");
      bool ok = false;
      EXPECT_EQ(dechunk(std::string_view(r.out).substr(body_at + 4), ok), clean) << k;
      EXPECT_TRUE(ok) << "the client gets a well-formed chunked body";
    }
  }
}

TEST(EgressResponse, EveryByteSplitOfTheRawStream) {
  // One byte per chunk, then every split of the raw bytes into two reads.
  std::vector<std::string> pieces;
  std::string body = "echo " + kToken + " end";
  for (char c : body) pieces.emplace_back(1, c);
  std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(pieces);
  for (size_t cut = 0; cut <= raw.size(); ++cut) {
    auto r = run({raw.substr(0, cut), raw.substr(cut)});
    ASSERT_EQ(r.error, "") << cut;
    bool ok = false;
    ASSERT_EQ(dechunk(r.out.substr(r.out.find("\r\n\r\n") + 4), ok),
              "echo " + stars(kToken.size()) + " end")
        << cut;
    EXPECT_TRUE(ok);
  }
}

TEST(EgressResponse, HeadersTheStatusLineAndTrailersNeverCarryIt) {
  std::string raw = "HTTP/1.1 401 bad token " + kToken + "\r\nX-Echo: " + kValue +
                    "\r\nX-Token: " + kToken + "\r\nX-Prefix: " + kToken.substr(0, 12) +
                    "...\r\nTrailer: X-Auth\r\n" + "Transfer-Encoding: chunked\r\n\r\n" +
                    chunked({"OK!"}, "X-Auth: " + kValue + "\r\n");
  auto r = run({raw});
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(leaked_piece(r.out), "") << r.out;
  EXPECT_EQ(
      r.out,
      "HTTP/1.1 401 bad token " + stars(kToken.size()) + "\r\nX-Echo: " + stars(kValue.size()) +
          "\r\nX-Token: " + stars(kToken.size()) + "\r\nX-Prefix: " + stars(12) +
          "...\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nOK!\r\n0\r\n\r\n");
}

TEST(EgressResponse, ContentLengthAndCloseDelimitedBodiesKeepTheirLength) {
  std::string body = "token=" + kToken + "\n";
  auto sized = run({"HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\n\r\n" + body.substr(0, 10),
                    body.substr(10) + "HTTP/1.1 200 OK\r\n\r\nignored"});
  ASSERT_EQ(sized.error, "");
  EXPECT_EQ(sized.out, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\ntoken=" + stars(kToken.size()) + "\n");
  auto until_close = run(
      {"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n" + body.substr(0, 12), body.substr(12)});
  ASSERT_EQ(until_close.error, "");
  EXPECT_EQ(until_close.out,
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ntoken=" + stars(kToken.size()) + "\n");
  // An HTTP/1.0 client cannot read chunks: it gets the body up to the close.
  auto old = run({"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                  chunked({body.substr(0, 9), body.substr(9)})},
                 false, true);
  ASSERT_EQ(old.error, "");
  EXPECT_EQ(old.out,
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ntoken=" + stars(kToken.size()) + "\n");
}

TEST(EgressResponse, NoBodyForHeadAnd204AndInterimResponsesPassScrubbed) {
  auto head = run({"HTTP/1.1 200 OK\r\nContent-Length: 50\r\nX-T: " + kToken + "\r\n\r\n"}, true);
  ASSERT_EQ(head.error, "");
  EXPECT_EQ(head.out, "HTTP/1.1 200 OK\r\nX-T: " + stars(kToken.size()) +
                          "\r\nContent-Length: 50\r\nConnection: close\r\n\r\n");
  auto none = run({"HTTP/1.1 204 No Content\r\n\r\n"});
  EXPECT_EQ(none.out, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
  auto interim = run({"HTTP/1.1 103 Early Hints\r\nLink: " + kToken +
                      "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"});
  ASSERT_EQ(interim.error, "");
  EXPECT_EQ(interim.out,
            "HTTP/1.1 103 Early Hints\r\nLink: " + stars(kToken.size()) +
                "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
}

TEST(EgressResponse, RefusesWhatItCannotScrubOrFrame) {
  struct Case {
    std::string raw, reason;
  } cases[] = {
      {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
       "Content-Encoding gzip"},
      {"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nabc", "Content-Encoding br"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
       "transfer coding gzip"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
       "conflicting Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
       "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "longer than its size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(5000, '1'),
       "overlong chunk line"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
       "in the middle of the response body"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab", "in the middle of the response body"},
      {"HTTP/1.1 200 OK\r\nX: 1\r\n", "before its response head was complete"},
      {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", "switched protocols"},
      {"HTTP/1.1 200 OK\r\n folded\r\n\r\n", "folded"},
      {"HTTP/1.1 200 OK\nX: 1\r\n\r\n", "bare LF"},
      {"HTTP/2 200\r\n\r\n", "status line"},
      {"SSH-2.0-OpenSSH\r\n\r\n", "status line"},
      {"HTTP/1.1 200 OK\r\n" + std::string(70 << 10, 'x'), "too large"},
  };
  for (const auto& c : cases) {
    auto r = run({c.raw});
    EXPECT_NE(r.error.find(c.reason), std::string::npos)
        << c.raw.substr(0, 200) << " -> '" << r.error << "'";
    EXPECT_EQ(r.out.find("abc"), std::string::npos);
  }
}
