// airlock usage: usage and cost from a running airlock serve (GET /v1/usage, docs/usage.md).
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/airlock/session_client.h"
#include "http/url.h"
#include "usage/usage_table.h"

namespace {

const char* const kHelp =
    "usage: airlock usage [--server URL] [--key-file FILE] [--from DATE] [--to DATE]\n"
    "                     [--group-by tenant|day|image] [--csv | --json]\n"
    "  Usage (wall and CPU ms, memory GB-seconds, storage GB-hours, egress bytes, session time) and\n"
    "  its cost under the service's rate card, for the key's tenant (an admin key: every tenant).\n"
    "  DATE: YYYY-MM-DD (UTC, from inclusive, to exclusive) or RFC 3339 UTC. Default grouping: day.\n"
    "  The key comes from $AIRLOCK_API_KEY or --key-file FILE; the server from --server or\n"
    "  $AIRLOCK_SERVER (default http://127.0.0.1:8470).\n";

}  // namespace

int usage_command(const std::vector<std::string>& args) {
  using namespace airlock;
  cli::SessionArgs conn_args;
  std::string from, to, group_by = "day", format = "table";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (a == "--csv" || a == "--json") {
      format = a.substr(2);
      continue;
    }
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "airlock usage: unknown option or missing value: %s\n%s", a.c_str(), kHelp);
      return 125;
    }
    const std::string& v = args[++i];
    if (a == "--server") conn_args.server = v;
    else if (a == "--key-file") conn_args.key_file = v;
    else if (a == "--from") from = v;
    else if (a == "--to") to = v;
    else if (a == "--group-by") group_by = v;
    else {
      std::fprintf(stderr, "airlock usage: unknown option %s\n%s", a.c_str(), kHelp);
      return 125;
    }
  }
  auto conn = cli::open_conn(conn_args);
  if (!conn) return 125;
  std::string target = "/v1/usage?group_by=" + api::percent_encode(group_by);
  if (!from.empty()) target += "&from=" + api::percent_encode(from);
  if (!to.empty()) target += "&to=" + api::percent_encode(to);
  auto r = cli::call(*conn, "GET", target);
  if (!r) return 1;
  auto report = nlohmann::json::parse(r->body, nullptr, false);
  if (!report.is_object()) {
    std::fprintf(stderr, "airlock usage: the service's answer is not JSON\n");
    return 1;
  }
  if (format == "json") {
    cli::print_json(report);
  } else {
    std::string text = format == "csv" ? usage::usage_csv(report) : usage::usage_table(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return 0;
}
