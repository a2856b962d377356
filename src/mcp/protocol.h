// The MCP methods airlock answers, over any transport: initialize (version
// negotiation), ping, tools/list, tools/call; notifications are taken and
// need no answer. Transports parse the message (jsonrpc.h), keep the
// calls in flight for notifications/cancelled, and send what comes back.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mcp/api_backend.h"
#include "mcp/call_context.h"
#include "mcp/jsonrpc.h"

namespace airlock::mcp {

// The revision the newest official TypeScript SDK negotiates
// (@modelcontextprotocol/sdk 1.32.2: LATEST_PROTOCOL_VERSION), then the
// older ones it still supports.
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";
const std::vector<std::string>& supported_protocol_versions();
bool is_supported_version(const std::string& version);
// The client's version when airlock speaks it, else the latest.
std::string negotiate_version(const nlohmann::json& requested);

nlohmann::json initialize_result(const nlohmann::json& params);

// params._meta.progressToken (a string or an integer), if the request has one.
std::optional<nlohmann::json> progress_token(const Message& m);
// params.requestId of notifications/cancelled.
std::optional<nlohmann::json> cancelled_request(const Message& m);
nlohmann::json progress_notification(const nlohmann::json& token, int progress,
                                     const std::string& message);

// A call that may run long: a transport runs it off its reading thread.
bool is_tool_call(const Message& m);

using ApiFactory = std::function<std::unique_ptr<ApiConnection>()>;

// The response to a request; nullopt for a notification or a response.
// Never throws: a broken tool becomes an internal error response.
std::optional<nlohmann::json> answer(const Message& m, const CallContext& ctx,
                                     const ApiFactory& api);

}  // namespace airlock::mcp
