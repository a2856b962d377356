// Tool arguments checked against the tool's input JSON Schema before a tool
// runs. A small subset of JSON Schema 2020-12, the one the catalogue
// (tool_catalogue.cc) uses: type (one name), properties, required,
// additionalProperties: false, enum, minLength, maxLength, minimum, maximum,
// items, maxItems. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace airlock::mcp {

// The first problem, naming the field ("files[1].name: must be a string"),
// or nullopt when `value` fits `schema`.
std::optional<std::string> check_arguments(const nlohmann::json& schema,
                                           const nlohmann::json& value);

}  // namespace airlock::mcp
