// A tool's answer (MCP CallToolResult) and the ways tools build one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "http/client.h"

namespace airlock::mcp {

struct ToolResult {
  nlohmann::json content = nlohmann::json::array();
  nlohmann::json structured;  // null: none
  bool is_error = false;
  nlohmann::json to_json() const;
};

// An error the model should read and react to (isError, one text block).
ToolResult error_result(const std::string& text);
// The API refused or could not be reached: the status, the service's error
// code and message ("the service refused: 403 forbidden: this key lacks...").
ToolResult api_error_result(const api::Response& r);
std::string describe_api_error(const api::Response& r);
bool ok(const api::Response& r);  // 2xx
// j[key] when it is a string, else "" (API answers are read defensively).
std::string str(const nlohmann::json& j, const char* key);
// The body of a 2xx answer as JSON; null when it is not JSON.
nlohmann::json body_json(const api::Response& r);

}  // namespace airlock::mcp
