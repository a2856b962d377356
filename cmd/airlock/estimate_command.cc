// airlock estimate: a monthly cost in the rate card's currency, from a
// workload description or from a tenant's last N days (docs/usage.md).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "cmd/airlock/session_client.h"
#include "http/url.h"
#include "jobs/record.h"
#include "service/config.h"
#include "sys/file_io.h"
#include "usage/estimate.h"

namespace {

const char* const kHelp =
    "usage: airlock estimate --workload FILE [--config FILE] [--json]\n"
    "       airlock estimate --days N [--server URL] [--key-file FILE] [--json]\n"
    "  A monthly (30-day) cost with its assumptions. --workload: a JSON description,\n"
    "  {\"tasks\": [{\"name\", \"jobs_per_day\", \"wall_ms\", \"cpu_ms\", \"peak_memory_mb\", \"egress_kb\",\n"
    "  \"output_mb\", \"kept_days\"}], \"sessions\": [{\"name\", \"sessions_per_day\", \"minutes\", \"cpu_ms\",\n"
    "  \"peak_memory_mb\"}]}, priced with the [rates] of --config (default: the built-in card).\n"
    "  --days N: the key's tenant's measured usage over the last N days (GET /v1/usage), scaled to\n"
    "  30 days, priced with the service's own rates.\n";

void print_line(const nlohmann::json& l) {
  const auto& c = l["cost"];
  std::printf("  %-24s %14s %s  (cpu %s, memory %s, storage %s, egress %s, sessions %s)\n",
              l.value("name", "").substr(0, 24).c_str(), c.value("total", "").c_str(), c.value("currency", "").c_str(),
              c.value("cpu", "").c_str(), c.value("memory", "").c_str(), c.value("storage", "").c_str(),
              c.value("egress", "").c_str(), c.value("session", "").c_str());
}

}  // namespace

int estimate_command(const std::vector<std::string>& args) {
  using namespace airlock;
  std::string workload, config;
  long days = 0;
  bool as_json = false;
  cli::SessionArgs conn_args;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (a == "--json") {
      as_json = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      std::fprintf(stderr, "airlock estimate: unknown option or missing value: %s\n%s", a.c_str(), kHelp);
      return 125;
    }
    const std::string& v = args[++i];
    if (a == "--workload") workload = v;
    else if (a == "--config") config = v;
    else if (a == "--server") conn_args.server = v;
    else if (a == "--key-file") conn_args.key_file = v;
    else if (a == "--days") {
      char* end = nullptr;
      days = std::strtol(v.c_str(), &end, 10);
      if (*end || days < 1 || days > 366) {
        std::fprintf(stderr, "airlock estimate: --days: 1 to 366\n");
        return 125;
      }
    } else {
      std::fprintf(stderr, "airlock estimate: unknown option %s\n%s", a.c_str(), kHelp);
      return 125;
    }
  }
  if (workload.empty() == (days == 0)) {
    std::fprintf(stderr, "airlock estimate: give exactly one of --workload FILE or --days N\n%s", kHelp);
    return 125;
  }
  nlohmann::json estimate;
  if (!workload.empty()) {
    usage::RateCard card;
    if (!config.empty()) {
      auto c = service::load_config(config);
      if (!c) {
        std::fprintf(stderr, "airlock estimate: %s\n", c.error().message().c_str());
        return 125;
      }
      card = c->rates;
    }
    auto text = sys::read_file(workload, 1 << 20);
    if (!text) {
      std::fprintf(stderr, "airlock estimate: %s\n", text.error().message().c_str());
      return 125;
    }
    auto j = parse_json_or_discarded(*text, 16);
    auto w = usage::parse_workload(j);
    if (!w) {
      std::fprintf(stderr, "airlock estimate: %s: %s\n", workload.c_str(),
                   j.is_discarded() ? "not JSON" : w.error().what.c_str());
      return 125;
    }
    estimate = usage::estimate_month(*w, card);
  } else {
    auto conn = cli::open_conn(conn_args);
    if (!conn) return 125;
    auto from = std::chrono::system_clock::now() - std::chrono::hours(24 * days);
    auto r = cli::call(*conn, "GET", "/v1/usage?from=" + api::percent_encode(jobs::rfc3339(from)));
    if (!r) return 1;
    auto report = nlohmann::json::parse(r->body, nullptr, false);
    if (!report.is_object() || !report.contains("total") || !report.contains("rates")) {
      std::fprintf(stderr, "airlock estimate: the service's answer has no usage total (is it older than this airlock?)\n");
      return 1;
    }
    std::map<std::string, std::string> rates;
    for (const auto& [k, v] : report["rates"].items())
      if (v.is_string()) rates[k] = v.get<std::string>();
    auto card = usage::parse_rate_card(rates);
    if (!card) {
      std::fprintf(stderr, "airlock estimate: the service's rates: %s\n", card.error().what.c_str());
      return 1;
    }
    estimate = usage::estimate_from_measured(report["total"], static_cast<uint64_t>(days), *card);
  }
  if (as_json) {
    std::printf("%s\n", estimate.dump(2).c_str());
    return 0;
  }
  std::printf("Estimate for a month of %llu days:\n", static_cast<unsigned long long>(usage::kDaysPerMonth));
  if (estimate.contains("lines"))
    for (const auto& l : estimate["lines"]) print_line(l);
  print_line(estimate["total"]);
  std::printf("Assumptions:\n");
  for (const auto& a : estimate["assumptions"]) std::printf("  - %s\n", a.get<std::string>().c_str());
  return 0;
}
