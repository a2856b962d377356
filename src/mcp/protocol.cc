#include "mcp/protocol.h"

#include <algorithm>
#include <exception>

#include "mcp/tool_catalogue.h"
#include "mcp/tools.h"

namespace airlock::mcp {

using json = nlohmann::json;

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> kVersions = {kLatestProtocolVersion, "2025-06-18",
                                                     "2025-03-26", "2024-11-05", "2024-10-07"};
  return kVersions;
}

bool is_supported_version(const std::string& version) {
  const auto& v = supported_protocol_versions();
  return std::find(v.begin(), v.end(), version) != v.end();
}

std::string negotiate_version(const json& requested) {
  if (requested.is_string() && is_supported_version(requested.get<std::string>()))
    return requested.get<std::string>();
  return kLatestProtocolVersion;
}

json initialize_result(const json& params) {
  return json{
      {"protocolVersion",
       negotiate_version(params.contains("protocolVersion") ? params["protocolVersion"] : json())},
      {"capabilities", {{"tools", {{"listChanged", false}}}}},
      {"serverInfo", {{"name", "airlock"}, {"title", "airlock sandbox"}, {"version", "0.1.0"}}},
      {"instructions",
       "airlock runs code in a sandbox: run_code for one-off programs, open_session + "
       "run_in_session for work "
       "that keeps state between calls (pass the session_id each time, close_session at the end). "
       "Errors of "
       "the code come back as tool results with isError: read them and fix the code."}};
}

std::optional<json> progress_token(const Message& m) {
  if (!m.params.contains("_meta") || !m.params["_meta"].is_object()) return std::nullopt;
  const json& meta = m.params["_meta"];
  if (!meta.contains("progressToken")) return std::nullopt;
  const json& t = meta["progressToken"];
  if (t.is_string() || t.is_number_integer() || t.is_number_unsigned()) return t;
  return std::nullopt;
}

std::optional<json> cancelled_request(const Message& m) {
  if (m.kind != MessageKind::kNotification || m.method != "notifications/cancelled")
    return std::nullopt;
  if (!m.params.contains("requestId")) return std::nullopt;
  return m.params["requestId"];
}

json progress_notification(const json& token, int progress, const std::string& message) {
  return notification("notifications/progress",
                      {{"progressToken", token}, {"progress", progress}, {"message", message}});
}

bool is_tool_call(const Message& m) {
  return m.kind == MessageKind::kRequest && m.method == "tools/call";
}

namespace {

json call(const Message& m, const CallContext& ctx, const ApiFactory& api) {
  if (!m.params.contains("name") || !m.params["name"].is_string())
    return error_response(m.id, kInvalidParams, "tools/call needs params.name, a tool's name");
  std::string name = m.params["name"];
  const ToolDef* tool = find_tool(name);
  if (!tool)
    return error_response(m.id, kInvalidParams,
                          "unknown tool: " + name + " (tools/list names them)");
  json args = m.params.contains("arguments") ? m.params["arguments"] : json::object();
  if (args.is_null()) args = json::object();
  if (!args.is_object())
    return error_response(m.id, kInvalidParams, "params.arguments must be an object");
  auto conn = api();
  return result_response(m.id, call_tool(*tool, args, *conn, ctx).to_json());
}

}  // namespace

std::optional<json> answer(const Message& m, const CallContext& ctx, const ApiFactory& api) {
  if (m.kind != MessageKind::kRequest) return std::nullopt;
  try {
    if (m.method == "initialize") return result_response(m.id, initialize_result(m.params));
    if (m.method == "ping") return result_response(m.id, json::object());
    if (m.method == "tools/list") return result_response(m.id, tools_list_result());
    if (m.method == "tools/call") return call(m, ctx, api);
    return error_response(m.id, kMethodNotFound, "method not found: " + m.method);
  } catch (const std::exception& e) {
    return error_response(m.id, kInternalError, std::string("internal error: ") + e.what());
  }
}

}  // namespace airlock::mcp
