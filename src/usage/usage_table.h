// `airlock usage` output: the groups of a GET /v1/usage answer as an aligned
// table or as CSV (RFC 4180; a cell that a spreadsheet would read as a
// formula gets a leading '). Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace airlock::usage {

std::string usage_table(const nlohmann::json& report);
std::string usage_csv(const nlohmann::json& report);
std::string csv_cell(const std::string& text);

}  // namespace airlock::usage
