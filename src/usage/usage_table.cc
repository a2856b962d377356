#include "usage/usage_table.h"

#include <algorithm>
#include <vector>

namespace airlock::usage {

namespace {

using json = nlohmann::json;

const std::vector<std::string> kColumns = {"key",        "jobs",         "sessions",     "wall_ms", "cpu_ms",
                                           "memory_gb_s", "storage_gb_h", "egress_bytes", "session_ms", "cost"};

std::string field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::vector<std::string> row_of(const json& g) {
  json u = g.is_object() ? g.value("usage", json::object()) : json::object();
  json c = g.is_object() ? g.value("cost", json::object()) : json::object();
  std::string key = field(g, "key");
  if (g.is_object() && g.contains("name")) key += " (" + field(g, "name") + ")";
  return {key,
          field(g, "jobs"),
          field(g, "sessions"),
          field(u, "wall_ms"),
          field(u, "cpu_ms"),
          field(u, "memory_gb_s"),
          field(u, "storage_gb_h"),
          field(u, "egress_bytes"),
          field(u, "session_ms"),
          field(c, "total") + (c.contains("currency") ? " " + field(c, "currency") : "")};
}

std::vector<std::vector<std::string>> rows_of(const json& report) {
  std::vector<std::vector<std::string>> rows;
  if (report.is_object() && report.contains("groups") && report["groups"].is_array())
    for (const auto& g : report["groups"]) rows.push_back(row_of(g));
  if (report.is_object() && report.contains("total")) rows.push_back(row_of(report["total"]));
  return rows;
}

// Shown on a terminal: no control characters from a name.
std::string printable(std::string s) {
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return s;
}

}  // namespace

std::string csv_cell(const std::string& text) {
  std::string s = text;
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r'))
    s = "'" + s;
  if (s.find_first_of(",\"\r\n'") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string usage_csv(const json& report) {
  std::string out;
  for (size_t i = 0; i < kColumns.size(); ++i) out += (i ? "," : "") + kColumns[i];
  out += "\r\n";
  for (const auto& row : rows_of(report)) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_cell(row[i]);
    out += "\r\n";
  }
  return out;
}

std::string usage_table(const json& report) {
  auto rows = rows_of(report);
  std::vector<size_t> width(kColumns.size());
  for (size_t i = 0; i < kColumns.size(); ++i) width[i] = kColumns[i].size();
  for (auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], (row[i] = printable(row[i])).size());
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = row[i];
      std::string pad(width[i] - cell.size(), ' ');
      out += (i ? "  " : "") + (i == 0 ? cell + pad : pad + cell);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(kColumns);
  for (const auto& row : rows) out += line(row);
  return out;
}

}  // namespace airlock::usage
