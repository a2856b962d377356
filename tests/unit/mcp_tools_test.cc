// The tool catalogue, the argument checks and the capping of long text.
#include <gtest/gtest.h>

#include <set>

#include "mcp/content.h"
#include "mcp/schema_check.h"
#include "mcp/tool_catalogue.h"
#include "mcp/tools.h"

namespace airlock::mcp {
namespace {

using json = nlohmann::json;

// Every schema keyword the catalogue uses must be one check_arguments
// knows, or an input schema would promise a check that is never made.
void expect_known_keywords(const json& s, const std::string& where) {
  static const std::set<std::string> kKnown = {
      "type",    "properties", "required",  "additionalProperties",
      "enum",    "minLength",  "maxLength", "minimum",
      "maximum", "items",      "maxItems",  "description"};
  for (const auto& [k, v] : s.items()) {
    EXPECT_TRUE(kKnown.count(k)) << where << ": " << k;
    if (k == "type") {
      EXPECT_TRUE(v.is_string()) << where << ": one type per input schema";
    }
  }
  if (s.contains("properties"))
    for (const auto& [name, sub] : s["properties"].items())
      expect_known_keywords(sub, where + "." + name);
  if (s.contains("items")) expect_known_keywords(s["items"], where + "[]");
}

TEST(McpCatalogue, ElevenVerbNounToolsWithSchemasAndDescriptions) {
  const auto& tools = tool_catalogue();
  ASSERT_EQ(tools.size(), 11u);
  for (const auto& t : tools) {
    EXPECT_NE(t.name.find('_'), std::string::npos) << t.name;
    EXPECT_EQ(t.input_schema["type"], "object") << t.name;
    EXPECT_EQ(t.input_schema["additionalProperties"], false) << t.name;
    EXPECT_EQ(t.output_schema["type"], "object") << t.name;
    EXPECT_GT(t.description.size(), 100u) << t.name;
    expect_known_keywords(t.input_schema, t.name);
    EXPECT_EQ(find_tool(t.name), &t);
  }
  EXPECT_EQ(find_tool("nope"), nullptr);
}

TEST(McpCatalogue, EveryToolHasAnImplementationAndChecksItsArguments) {
  ApiConnection unused(ApiTarget{"127.0.0.1", 1, "k", "http://127.0.0.1:1"});
  for (const auto& t : tool_catalogue()) {
    EXPECT_TRUE(is_implemented(t.name)) << t.name;
    auto r = call_tool(t, json{{"unknown_argument", 1}}, unused, CallContext{});
    EXPECT_TRUE(r.is_error);
    EXPECT_EQ(r.content[0]["text"].get<std::string>().rfind("invalid arguments for " + t.name, 0),
              0u)
        << t.name;
  }
}

TEST(McpArguments, NamesTheFieldAndTheProblem) {
  const json& s = find_tool("run_code")->input_schema;
  EXPECT_FALSE(check_arguments(s, json{{"code", "print(1)"}}));
  EXPECT_EQ(*check_arguments(s, json::object()), "code: is required");
  EXPECT_EQ(*check_arguments(s, json::array()), "the arguments: must be an object");
  EXPECT_EQ(*check_arguments(s, json{{"code", ""}}), "code: must not be shorter than 1 characters");
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"language", "perl"}}),
            "language: must be one of \"python\", \"shell\"");
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"policy", {{"timeout_s", 0}}}}),
            "policy.timeout_s: must be at least 1");
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"policy", {{"timeout_s", 1.5}}}}),
            "policy.timeout_s: must be an integer");
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"files", {{{"name", 3}}}}}),
            "files[0].name: must be a string");
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"files", {{{"path", "a"}}}}}),
            "files[0].path: unknown argument (known: file_id, name, text)");
  EXPECT_EQ(
      *check_arguments(s, json{{"code", "x"}, {"files", json::array({json::object()}).dump()}}),
      "files: must be an array");
  json many = json::array();
  for (int i = 0; i < 33; ++i) many.push_back({{"file_id", "f"}});
  EXPECT_EQ(*check_arguments(s, json{{"code", "x"}, {"files", many}}), "files: at most 32 items");
  // Length counts characters, not bytes: 128 two-byte characters fit a 128-character name.
  std::string name;
  for (int i = 0; i < 128; ++i) name += "\xC3\xA9";
  EXPECT_FALSE(
      check_arguments(s, json{{"code", "x"}, {"files", {{{"name", name}, {"text", ""}}}}}));
}

TEST(McpArguments, FileContentAndAllowRules) {
  EXPECT_EQ(*file_content(json{{"text", "abc"}}), "abc");
  EXPECT_EQ(*file_content(json{{"base64", "YWJj"}}), "abc");
  EXPECT_FALSE(file_content(json{{"base64", "***"}}));
  EXPECT_FALSE(file_content(json{{"text", "a"}, {"base64", "YQ=="}}));
  EXPECT_FALSE(file_content(json::object()));
  EXPECT_EQ(*allow_rule("api.example.com:443"), (json{{"host", "api.example.com"}, {"port", 443}}));
  EXPECT_EQ(*allow_rule("[::1]:80"), (json{{"host", "::1"}, {"port", 80}}));
  EXPECT_FALSE(allow_rule("api.example.com"));
  EXPECT_FALSE(allow_rule("api.example.com:0"));
  EXPECT_FALSE(allow_rule("api.example.com:65536"));
  EXPECT_FALSE(allow_rule(":443"));
  EXPECT_FALSE(allow_rule("h:44x"));
}

TEST(McpContent, LongTextIsCutAtACharacterBoundaryWithANote) {
  auto short_text = cap_text("hello", 10);
  EXPECT_FALSE(short_text.capped);
  EXPECT_EQ(cap_note("stdout", short_text), "");
  std::string e5 = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // 5 x é, 10 bytes
  auto cut = cap_text(e5, 7);
  EXPECT_TRUE(cut.capped);
  EXPECT_EQ(cut.text, "\xC3\xA9\xC3\xA9\xC3\xA9");  // 6 bytes: never half a character
  EXPECT_EQ(cut.original_bytes, 10u);
  EXPECT_EQ(cap_note("stdout", cut),
            "[stdout: the first 6 of 10 bytes are shown; the rest was cut]");
  auto bad = cap_text(
      "a\xff"
      "b",
      100);
  EXPECT_EQ(bad.text,
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_FALSE(bad.capped);
}

TEST(McpContent, Blocks) {
  EXPECT_EQ(image_block("AAAA", "image/png"),
            (json{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}}));
  json link = resource_link("http://127.0.0.1:8470/v1/jobs/j/outputs/a.csv", "a.csv", "text/csv",
                            "ab12", 5);
  EXPECT_EQ(link["type"], "resource_link");
  EXPECT_EQ(link["_meta"]["sha256"], "ab12");
  EXPECT_NE(link["description"].get<std::string>().find("sha256 ab12"), std::string::npos);
  EXPECT_EQ(mime_of("png"), "image/png");
  EXPECT_EQ(mime_of("exe"), "application/octet-stream");
}

}  // namespace
}  // namespace airlock::mcp
