#include "mcp/jsonrpc.h"

#include <cmath>

#include "base/json_parse.h"

namespace airlock::mcp {

using json = nlohmann::json;

namespace {

bool valid_id(const json& id) {
  if (id.is_string()) return id.get_ref<const std::string&>().size() <= 256;
  return id.is_number_integer() || id.is_number_unsigned();
}

}  // namespace

std::expected<Message, json> parse_message(std::string_view text) {
  if (text.size() > kMaxMessageBytes)
    return std::unexpected(
        error_response(nullptr, kInvalidRequest, "the message is larger than 16 MiB"));
  auto parsed = parse_json(text);
  if (!parsed)
    return std::unexpected(
        error_response(nullptr, kParseError, "not JSON: " + parsed.error().what));
  json& j = *parsed;
  if (j.is_array())
    return std::unexpected(
        error_response(nullptr, kInvalidRequest,
                       "batches are not supported (protocol 2025-06-18 and later): send one "
                       "message at a time"));
  if (!j.is_object())
    return std::unexpected(error_response(nullptr, kInvalidRequest, "a message is a JSON object"));
  json id = nullptr;
  bool has_id = j.contains("id");
  if (has_id) {
    if (!valid_id(j["id"]))
      return std::unexpected(error_response(
          nullptr, kInvalidRequest, "\"id\" must be a string (at most 256 bytes) or an integer"));
    id = j["id"];
  }
  if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0")
    return std::unexpected(error_response(id, kInvalidRequest, "\"jsonrpc\" must be \"2.0\""));
  Message m;
  m.id = id;
  m.params = json::object();
  if (!j.contains("method")) {
    if (has_id && (j.contains("result") || j.contains("error"))) {
      m.kind = MessageKind::kResponse;
      return m;
    }
    return std::unexpected(error_response(id, kInvalidRequest, "a request needs a \"method\""));
  }
  if (!j["method"].is_string() || j["method"].get_ref<const std::string&>().empty())
    return std::unexpected(
        error_response(id, kInvalidRequest, "\"method\" must be a non-empty string"));
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object())
      return std::unexpected(error_response(id, kInvalidParams, "\"params\" must be an object"));
    m.params = std::move(j["params"]);
  }
  m.kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
  return m;
}

json result_response(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_response(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json notification(const std::string& method, json params) {
  return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string serialize(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace airlock::mcp
