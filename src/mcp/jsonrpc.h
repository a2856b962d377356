// JSON-RPC 2.0 as MCP uses it: one message per line (stdio) or per POST
// body (Streamable HTTP). Pure: text in, a checked message or the error
// response to send out. Everything here is untrusted input.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace airlock::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// A message larger than this is refused unread (a tool call carries at most
// a 1 MiB program or a few MiB of base64 file content).
inline constexpr size_t kMaxMessageBytes = 16u << 20;

enum class MessageKind { kRequest, kNotification, kResponse };

struct Message {
  MessageKind kind = MessageKind::kRequest;
  nlohmann::json id;      // string or integer; null for a notification
  std::string method;     // empty for a response
  nlohmann::json params;  // an object ({} when absent)
};

// One message. On failure the error response to send back (its id is the
// message's id when that much could be read, else null).
std::expected<Message, nlohmann::json> parse_message(std::string_view text);

nlohmann::json result_response(const nlohmann::json& id, nlohmann::json result);
nlohmann::json error_response(const nlohmann::json& id, int code, const std::string& message);
nlohmann::json notification(const std::string& method, nlohmann::json params);

// Compact JSON on one line; invalid UTF-8 from a job becomes U+FFFD.
std::string serialize(const nlohmann::json& message);

}  // namespace airlock::mcp
