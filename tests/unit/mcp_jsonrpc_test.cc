// JSON-RPC framing and the MCP methods that need no API: malformed input
// gets a clear error response and never an exception.
#include <gtest/gtest.h>

#include "mcp/jsonrpc.h"
#include "mcp/protocol.h"

namespace airlock::mcp {
namespace {

using json = nlohmann::json;

int error_code(std::string_view text) {
  auto m = parse_message(text);
  EXPECT_FALSE(m.has_value()) << text;
  return m ? 0 : m.error()["error"]["code"].get<int>();
}

TEST(McpJsonRpc, RequestsNotificationsAndResponses) {
  auto r = parse_message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, MessageKind::kRequest);
  EXPECT_EQ(r->id, 7);
  EXPECT_TRUE(r->params.is_object());
  auto n = parse_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, MessageKind::kNotification);
  auto resp = parse_message(R"({"jsonrpc":"2.0","id":"a","result":{}})");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->kind, MessageKind::kResponse);
}

TEST(McpJsonRpc, MalformedInputGetsTheRightErrorCode) {
  EXPECT_EQ(error_code("{\"jsonrpc\":"), kParseError);
  EXPECT_EQ(error_code("\xff\xfe"), kParseError);
  EXPECT_EQ(error_code(std::string(200, '[') + std::string(200, ']')),
            kParseError);                        // nesting bound
  EXPECT_EQ(error_code("[]"), kInvalidRequest);  // batches are gone since 2025-06-18
  EXPECT_EQ(error_code("42"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"id":1,"method":"ping"})"), kInvalidRequest);  // no jsonrpc
  EXPECT_EQ(error_code(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})"),
            kInvalidRequest);  // fractional id
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":null,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":{},"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":1,"method":7})"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":1})"), kInvalidRequest);
  EXPECT_EQ(error_code(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})"), kInvalidParams);
}

TEST(McpJsonRpc, AnErrorKeepsTheIdWhenItCouldBeRead) {
  auto m = parse_message(R"({"jsonrpc":"1.0","id":"x","method":"ping"})");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error()["id"], "x");
  auto bad_id = parse_message(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})");
  ASSERT_FALSE(bad_id);
  EXPECT_TRUE(bad_id.error()["id"].is_null());
}

TEST(McpJsonRpc, SerializeNeverThrowsOnBadUtf8) {
  json j = notification("notifications/progress", {{"message", std::string("a\xff"
                                                                           "b")}});
  EXPECT_NE(serialize(j).find("a\xEF\xBF\xBD"
                              "b"),
            std::string::npos);
  EXPECT_EQ(serialize(j).find('\n'), std::string::npos);
}

Message request(const std::string& text) {
  auto m = parse_message(text);
  EXPECT_TRUE(m) << text;
  return *m;
}

// Methods that never reach the API: a factory that must not be called.
const ApiFactory kNoApi = []() -> std::unique_ptr<ApiConnection> {
  ADD_FAILURE() << "the API was used";
  return std::make_unique<ApiConnection>(ApiTarget{"127.0.0.1", 1, "k", "http://127.0.0.1:1"});
};

TEST(McpProtocol, NegotiatesTheSdkVersionsAndFallsBackToTheLatest) {
  EXPECT_EQ(negotiate_version("2025-11-25"), "2025-11-25");
  EXPECT_EQ(negotiate_version("2025-06-18"), "2025-06-18");
  EXPECT_EQ(negotiate_version("2025-03-26"), "2025-03-26");
  EXPECT_EQ(negotiate_version("2024-11-05"), "2024-11-05");
  EXPECT_EQ(negotiate_version("2099-01-01"), kLatestProtocolVersion);
  EXPECT_EQ(negotiate_version(json(3)), kLatestProtocolVersion);
  auto r = answer(
      request(
          R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"),
      CallContext{}, kNoApi);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["protocolVersion"], "2025-06-18");
  EXPECT_TRUE((*r)["result"]["capabilities"].contains("tools"));
  EXPECT_EQ((*r)["result"]["serverInfo"]["name"], "airlock");
}

TEST(McpProtocol, PingListAndUnknownMethods) {
  auto ping =
      answer(request(R"({"jsonrpc":"2.0","id":"p","method":"ping"})"), CallContext{}, kNoApi);
  EXPECT_EQ(*ping, json::parse(R"({"jsonrpc":"2.0","id":"p","result":{}})"));
  auto list =
      answer(request(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"), CallContext{}, kNoApi);
  EXPECT_EQ((*list)["result"]["tools"].size(), 11u);
  auto unknown = answer(request(R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})"),
                        CallContext{}, kNoApi);
  EXPECT_EQ((*unknown)["error"]["code"], kMethodNotFound);
  EXPECT_FALSE(answer(request(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"),
                      CallContext{}, kNoApi));
}

TEST(McpProtocol, ToolCallMisuseIsAProtocolErrorButBadArgumentsAreAToolError) {
  auto no_name = answer(request(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})"),
                        CallContext{}, kNoApi);
  EXPECT_EQ((*no_name)["error"]["code"], kInvalidParams);
  auto unknown =
      answer(request(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm_rf"}})"),
             CallContext{}, kNoApi);
  EXPECT_EQ((*unknown)["error"]["code"], kInvalidParams);
  EXPECT_NE((*unknown)["error"]["message"].get<std::string>().find("unknown tool: rm_rf"),
            std::string::npos);
  auto not_object = answer(
      request(
          R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":[1]}})"),
      CallContext{}, kNoApi);
  EXPECT_EQ((*not_object)["error"]["code"], kInvalidParams);
  // Arguments that do not fit the schema: the model can correct them (SEP-1303), so a result with
  // isError. The connection is made but never used: no request is sent for invalid arguments.
  const ApiFactory unused = [] {
    return std::make_unique<ApiConnection>(ApiTarget{"127.0.0.1", 1, "k", "http://127.0.0.1:1"});
  };
  auto bad = answer(
      request(
          R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":{"code":1}}})"),
      CallContext{}, unused);
  ASSERT_TRUE((*bad).contains("result"));
  EXPECT_EQ((*bad)["result"]["isError"], true);
  EXPECT_EQ((*bad)["result"]["content"][0]["text"],
            "invalid arguments for run_code: code: must be a string");
}

TEST(McpProtocol, ProgressTokenAndCancellation) {
  EXPECT_EQ(
      *progress_token(request(
          R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t"}}})")),
      "t");
  EXPECT_EQ(
      *progress_token(request(
          R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":5}}})")),
      5);
  EXPECT_FALSE(progress_token(request(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":[1]}}})")));
  EXPECT_FALSE(progress_token(
      request(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":7}})")));
  EXPECT_EQ(
      *cancelled_request(request(
          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}})")),
      4);
  EXPECT_FALSE(cancelled_request(request(
      R"({"jsonrpc":"2.0","id":9,"method":"notifications/cancelled","params":{"requestId":4}})")));
  json p = progress_notification("t", 3, "hello");
  EXPECT_EQ(p["params"]["progress"], 3);
  EXPECT_EQ(p["method"], "notifications/progress");
}

}  // namespace
}  // namespace airlock::mcp
