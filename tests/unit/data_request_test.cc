// A data request line is untrusted input from the sandbox: the parser accepts
// exactly the documented shape, and the reader stays within its limits
// whatever the sandbox writes.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "requests/data_request.h"

namespace airlock::requests {
namespace {

TEST(DataRequestParse, ReadsEveryField) {
  auto r = parse_data_request(
      R"({"name": "sales_2025.csv", "why": "the totals need a third year", "description": "monthly export",
          "params": {"year": 2025, "region": "EU", "final": true, "note": null}})",
      "r1");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->id, "r1");
  EXPECT_EQ(r->name, "sales_2025.csv");
  EXPECT_EQ(r->why, "the totals need a third year");
  EXPECT_EQ(r->description, "monthly export");
  EXPECT_EQ(nlohmann::json::parse(r->params_json),
            nlohmann::json::parse(R"({"year": 2025, "region": "EU", "final": true, "note": null})"));
}

TEST(DataRequestParse, OptionalFieldsDefault) {
  auto r = parse_data_request(R"({"name": "a", "why": "b"})", "r2");
  ASSERT_TRUE(r) << r.error().what;
  EXPECT_EQ(r->description, "");
  EXPECT_EQ(r->params_json, "{}");
}

struct Bad {
  const char* line;
  const char* reason;  // a part of the refusal reason
};

class DataRequestRefused : public ::testing::TestWithParam<Bad> {};

TEST_P(DataRequestRefused, WithAReason) {
  auto r = parse_data_request(GetParam().line, "r1");
  ASSERT_FALSE(r) << GetParam().line;
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid);
  EXPECT_NE(r.error().what.find(GetParam().reason), std::string::npos) << r.error().what;
}

INSTANTIATE_TEST_SUITE_P(
    Lines, DataRequestRefused,
    ::testing::Values(
        Bad{"not json", "not valid JSON"}, Bad{R"(["name", "why"])", "not a JSON object"},
        Bad{R"({"why": "x"})", "name:"}, Bad{R"({"name": "", "why": "x"})", "name:"},
        Bad{R"({"name": "../etc/passwd", "why": "x"})", "name:"},
        Bad{R"({"name": "a b", "why": "x"})", "name:"},
        Bad{R"({"name": "https://example.invalid/x", "why": "x"})", "name:"},
        Bad{R"({"name": 7, "why": "x"})", "name:"}, Bad{R"({"name": "a"})", "why: required"},
        Bad{R"({"name": "a", "why": ""})", "why: must be 1-1000"},
        Bad{R"({"name": "a", "why": 3})", "why: must be a string"},
        Bad{R"({"name": "a", "why": "ring\u0007bell"})", "control characters"},
        Bad{R"({"name": "a", "why": "csi\u009b"})", "control characters"},
        Bad{R"({"name": "a", "why": "x", "description": "\u001b[2J"})", "control characters"},
        Bad{R"({"name": "a", "why": "x", "url": "http://127.0.0.1/"})", "unknown field"},
        Bad{R"({"name": "a", "why": "x", "params": [1]})", "params: must be a JSON object"},
        Bad{R"({"name": "a", "why": "x", "params": {"k": {"deep": 1}}})", "nested deeper"},
        Bad{R"({"name": "a", "why": "x", "params": {"k": [1]}})", "nested deeper"},
        Bad{R"({"name": "a", "why": "x", "params": {"bad key": 1}})", "params: keys"},
        Bad{R"({"name": "a", "why": "x", "params": {"k": "\u001b]0;t\u0007"}})", "params.k: control"},
        Bad{"{\"name\": \"a\", \"why\": \"\xff\xfe\"}", "not valid JSON"}));

TEST(DataRequestParse, LengthBoundsCountCharactersNotBytes) {
  std::string why;
  for (int i = 0; i < 1000; ++i) why += "\xc3\xa9";  // é: 1000 characters, 2000 bytes
  Limits roomy{4, 1 << 20};
  EXPECT_TRUE(parse_data_request(R"({"name": "a", "why": ")" + why + "\"}", "r1", roomy));
  EXPECT_FALSE(parse_data_request(R"({"name": "a", "why": ")" + why + "x\"}", "r1", roomy));
  EXPECT_TRUE(parse_data_request(R"({"name": ")" + std::string(64, 'n') + R"(", "why": "x"})", "r1"));
  EXPECT_FALSE(parse_data_request(R"({"name": ")" + std::string(65, 'n') + R"(", "why": "x"})", "r1"));
}

TEST(DataRequestParse, TooManyParamsAreRefused) {
  nlohmann::json params = nlohmann::json::object();
  for (int i = 0; i < 33; ++i) params["k" + std::to_string(i)] = i;
  auto r = parse_data_request(nlohmann::json{{"name", "a"}, {"why", "x"}, {"params", params}}.dump(), "r1");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("at most 32 keys"), std::string::npos);
}

TEST(DataRequestParse, ALineOverTheByteLimitIsRefusedBeforeParsing) {
  Limits small{4, 64};
  auto r = parse_data_request(R"({"name": "a", "why": ")" + std::string(60, 'x') + "\"}", "r1", small);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().what.find("longer than 64 bytes"), std::string::npos);
}

TEST(RequestReader, SplitsLinesAcrossPiecesAndNumbersAcceptedRequests) {
  RequestReader reader;
  reader.feed(R"({"name": "a", "wh)");
  reader.feed("y\": \"1\"}\n\n   \nnot json\n{\"name\": \"b\", \"why\": \"2\"}\r\n");
  reader.feed(R"({"name": "c", "why": "3"})");  // no newline: counted at finish
  reader.finish();
  ASSERT_EQ(reader.requests().size(), 3u);
  EXPECT_EQ(reader.requests()[0].id, "r1");
  EXPECT_EQ(reader.requests()[0].name, "a");
  EXPECT_EQ(reader.requests()[1].id, "r2") << "a refused line takes no id";
  EXPECT_EQ(reader.requests()[1].name, "b");
  EXPECT_EQ(reader.requests()[2].id, "r3");
  ASSERT_EQ(reader.refused().size(), 1u);
  EXPECT_EQ(reader.refused()[0].bytes, 8u);
  EXPECT_NE(reader.refused()[0].reason.find("not valid JSON"), std::string::npos);
}

TEST(RequestReader, AFloodOfOneLineKeepsOnlyTheLimit) {
  Limits limits{4, 4096, 8 << 20};
  RequestReader reader(limits);
  const std::string chunk(64 << 10, 'A');
  for (int i = 0; i < 64; ++i) reader.feed(chunk);  // 4 MiB, no newline
  reader.feed("\n");
  reader.finish();
  EXPECT_TRUE(reader.requests().empty());
  ASSERT_EQ(reader.refused().size(), 1u);
  EXPECT_EQ(reader.refused()[0].bytes, 4u << 20) << "the whole line is counted";
  EXPECT_NE(reader.refused()[0].reason.find("longer than 4096 bytes"), std::string::npos);
  EXPECT_EQ(reader.bytes_read(), (4u << 20) + 1);
}

TEST(RequestReader, LinesPastTheLimitAreCountedNotParsed) {
  RequestReader reader(Limits{4, 4096});
  std::string all;
  for (int i = 0; i < 1000; ++i) all += R"({"name": "n)" + std::to_string(i) + R"(", "why": "w"})" "\n";
  reader.feed(all);
  reader.finish();
  ASSERT_EQ(reader.requests().size(), 4u);
  EXPECT_EQ(reader.requests()[3].name, "n3");
  auto refused = reader.refused();
  ASSERT_EQ(refused.size(), 1u) << "996 lines past the limit become one entry";
  EXPECT_EQ(refused[0].lines, 996u);
  EXPECT_EQ(refused[0].reason, "over the limit of 4 requests: not read");
  uint64_t beyond = 0;  // line bytes, without newlines
  for (int i = 4; i < 1000; ++i) beyond += std::string(R"({"name": "n)" + std::to_string(i) + R"(", "why": "w"})").size();
  EXPECT_EQ(refused[0].bytes, beyond) << "every byte past the limit counted";
}

TEST(RequestReader, InvalidLinesUseUpTheLineLimit) {
  RequestReader reader(Limits{2, 4096});
  reader.feed("x\ny\n{\"name\": \"a\", \"why\": \"w\"}\n");
  reader.finish();
  EXPECT_TRUE(reader.requests().empty()) << "only two lines are looked at";
  auto refused = reader.refused();
  ASSERT_EQ(refused.size(), 3u);
  EXPECT_EQ(refused[2].lines, 1u);
  EXPECT_EQ(refused[2].reason, "over the limit of 2 requests: not read");
}

TEST(RequestReader, AnExactlyFullLineIsAccepted) {
  Limits limits{4, 40};
  std::string line = R"({"name": "a", "why": ")";
  line += std::string(40 - line.size() - 2, 'w') + "\"}";
  ASSERT_EQ(line.size(), 40u);
  RequestReader reader(limits);
  reader.feed(line + "\n" + line + "w\n");
  reader.finish();
  EXPECT_EQ(reader.requests().size(), 1u);
  ASSERT_EQ(reader.refused().size(), 1u);
  EXPECT_EQ(reader.refused()[0].bytes, 41u);
}

TEST(RequestIds, AreNumberedFromOne) {
  EXPECT_EQ(request_id(1), "r1");
  EXPECT_EQ(request_id(12), "r12");
  EXPECT_TRUE(valid_request_name("sales-2025_v2.csv"));
  EXPECT_FALSE(valid_request_name("a/b"));
  EXPECT_FALSE(valid_request_name(""));
}

}  // namespace
}  // namespace airlock::requests

namespace airlock::requests {
namespace {

TEST(RequestReader, ClosesTheChannelPastItsByteLimit) {
  RequestReader reader(Limits{4, 4096, 10000});
  EXPECT_TRUE(reader.feed(R"({"name": "a", "why": "w"})" "\n"));
  const std::string flood(64 << 10, '\n');  // blank lines: no request, only bytes
  EXPECT_FALSE(reader.feed(flood)) << "past 10000 bytes the caller must close the channel";
  EXPECT_FALSE(reader.feed(R"({"name": "b", "why": "w"})" "\n")) << "nothing is read once closed";
  reader.finish();
  EXPECT_EQ(reader.bytes_read(), 10000u) << "not a byte past the limit is looked at";
  ASSERT_EQ(reader.requests().size(), 1u);
  auto refused = reader.refused();
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].reason, "the channel carried more than 10000 bytes: closed, the rest not read");
  EXPECT_EQ(refused[0].bytes, 10000u);
  EXPECT_EQ(refused[0].lines, 0u);
}

TEST(RequestReader, APendingLineAtTheClosingIsNotParsed) {
  RequestReader reader(Limits{4, 4096, 30});
  EXPECT_FALSE(reader.feed(R"({"name": "a", "why": "a long reason"})"));  // 37 bytes, cut at 30
  reader.finish();
  EXPECT_TRUE(reader.requests().empty());
  ASSERT_EQ(reader.refused().size(), 1u);
  EXPECT_NE(reader.refused()[0].reason.find("closed"), std::string::npos);
}

}  // namespace
}  // namespace airlock::requests
