// Runs one tool of the catalogue over the API. Arguments are checked
// against the tool's input schema first; what a tool cannot do is an
// isError result, never an exception.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>

#include "mcp/api_backend.h"
#include "mcp/call_context.h"
#include "mcp/tool_catalogue.h"
#include "mcp/tool_result.h"

namespace airlock::mcp {

ToolResult call_tool(const ToolDef& tool, const nlohmann::json& arguments, ApiConnection& api,
                     const CallContext& ctx);

// True when `name` has an implementation (every tool of the catalogue must).
bool is_implemented(const std::string& name);

// The implementations (job_tools.cc, session_tools.cc, request_tools.cc).
ToolResult run_code(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult upload_file(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult get_job_record(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult open_session(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult run_in_session(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult list_session_files(const nlohmann::json& args, ApiConnection& api,
                              const CallContext& ctx);
ToolResult read_session_file(const nlohmann::json& args, ApiConnection& api,
                             const CallContext& ctx);
ToolResult write_session_file(const nlohmann::json& args, ApiConnection& api,
                              const CallContext& ctx);
ToolResult snapshot_session(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult close_session(const nlohmann::json& args, ApiConnection& api, const CallContext& ctx);
ToolResult refuse_data_request(const nlohmann::json& args, ApiConnection& api,
                               const CallContext& ctx);  // request_tools.cc

// The result of a finished job's view (GET /v1/jobs/{id}) and of an ended
// session call's view; `api` is used only to fetch a succeeded job's PNG
// outputs. input_requested is not an error in either (data_requests.h).
ToolResult job_result(ApiConnection& api, const nlohmann::json& view);
ToolResult call_result(const nlohmann::json& view);

// The bytes of a file given as {"text": ...} or {"base64": ...} (exactly
// one); an error text otherwise.
std::expected<std::string, std::string> file_content(const nlohmann::json& args);
// "HOST:PORT" -> {"host":..., "port":...}, the API's rule; an error text otherwise.
std::expected<nlohmann::json, std::string> allow_rule(const std::string& destination);

}  // namespace airlock::mcp
