// The tools the MCP server offers: names, model-facing descriptions, input
// and output JSON Schemas. Data only; the implementations are in
// job_tools.cc and session_tools.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace airlock::mcp {

struct ToolDef {
  std::string name, title, description;
  nlohmann::json input_schema, output_schema;
};

const std::vector<ToolDef>& tool_catalogue();
const ToolDef* find_tool(const std::string& name);  // null if there is none

// The result of tools/list.
nlohmann::json tools_list_result();

}  // namespace airlock::mcp
