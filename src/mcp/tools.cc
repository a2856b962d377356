#include "mcp/tools.h"

#include <charconv>
#include <map>

#include "base/base64.h"
#include "mcp/schema_check.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

using Impl = ToolResult (*)(const json&, ApiConnection&, const CallContext&);

const std::map<std::string, Impl>& impls() {
  static const std::map<std::string, Impl> kImpls = {
      {"run_code", run_code},
      {"upload_file", upload_file},
      {"get_job_record", get_job_record},
      {"open_session", open_session},
      {"run_in_session", run_in_session},
      {"list_session_files", list_session_files},
      {"read_session_file", read_session_file},
      {"write_session_file", write_session_file},
      {"snapshot_session", snapshot_session},
      {"close_session", close_session},
      {"refuse_data_request", refuse_data_request},
  };
  return kImpls;
}

}  // namespace

bool is_implemented(const std::string& name) { return impls().count(name) > 0; }

ToolResult call_tool(const ToolDef& tool, const json& arguments, ApiConnection& api,
                     const CallContext& ctx) {
  if (auto problem = check_arguments(tool.input_schema, arguments))
    return error_result("invalid arguments for " + tool.name + ": " + *problem);
  auto impl = impls().find(tool.name);
  if (impl == impls().end())
    return error_result(tool.name +
                        " is not implemented");  // McpCatalogue tests keep this unreachable
  return impl->second(arguments, api, ctx);
}

std::expected<std::string, std::string> file_content(const json& args) {
  bool text = args.contains("text"), b64 = args.contains("base64");
  if (text == b64)
    return std::unexpected("give the content as exactly one of \"text\" or \"base64\"");
  if (text) return args["text"].get<std::string>();
  auto bytes = base64_decode(args["base64"].get<std::string>());
  if (!bytes) return std::unexpected("\"base64\" is not valid base64");
  return *bytes;
}

std::expected<json, std::string> allow_rule(const std::string& destination) {
  auto colon = destination.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == destination.size())
    return std::unexpected("policy.allow: \"" + destination + "\" is not HOST:PORT");
  std::string host = destination.substr(0, colon), port_text = destination.substr(colon + 1);
  int port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
    return std::unexpected("policy.allow: \"" + destination + "\": the port must be 1-65535");
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return json{{"host", host}, {"port", port}};
}

}  // namespace airlock::mcp
