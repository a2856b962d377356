#include "mcp/tool_result.h"

#include "base/json_parse.h"
#include "mcp/content.h"

namespace airlock::mcp {

using json = nlohmann::json;

json ToolResult::to_json() const {
  json j = {{"content", content}, {"isError", is_error}};
  if (!structured.is_null()) j["structuredContent"] = structured;
  return j;
}

ToolResult error_result(const std::string& text) {
  ToolResult r;
  r.is_error = true;
  r.content.push_back(text_block(text));
  return r;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool ok(const api::Response& r) { return r.status >= 200 && r.status <= 299; }

json body_json(const api::Response& r) { return parse_json_or_discarded(r.body); }

std::string describe_api_error(const api::Response& r) {
  if (r.status == 0) return "cannot reach airlock serve (" + r.error + "); try again later";
  json j = parse_json_or_discarded(r.body);
  std::string text = "the service refused the call: " + std::to_string(r.status);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    if (e.contains("code") && e["code"].is_string()) text += " " + e["code"].get<std::string>();
    if (e.contains("message") && e["message"].is_string())
      text += ": " + e["message"].get<std::string>();
  } else {
    text += ": " + cap_text(r.body, 300).text;
  }
  if (r.status == 429)
    text += " (the service is busy or a limit of the tenant is reached: wait, or close a session)";
  return text;
}

ToolResult api_error_result(const api::Response& r) { return error_result(describe_api_error(r)); }

}  // namespace airlock::mcp
