// GET /v1/usage (docs/usage.md): usage and its cost under the rate card,
// for the caller's tenant (an admin key: every tenant), over a time range,
// grouped by tenant, day or image.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/server.h"
#include "service/job_service.h"
#include "store/store.h"
#include "usage/ledger.h"

namespace airlock::service {

void install_usage_routes(api::HttpServer& server, JobService& service, store::Store& store);

// The store's rows as usage items: jobs and sessions one each (an open one
// up to `now_ms`), and stored objects one per UTC day they were kept within
// [from_ms, min(to_ms, now_ms)). Pure.
std::vector<usage::Item> usage_items(const std::vector<store::UsageRow>& rows, int64_t from_ms, int64_t to_ms,
                                     int64_t now_ms);

// "" (unbounded), "YYYY-MM-DD" (that day's start, UTC) or RFC 3339 UTC; the
// bound as stored times compare (text) and in ms. nullopt: not a time.
struct TimeBound {
  std::string text;
  int64_t ms = 0;
};
std::optional<TimeBound> parse_time_bound(const std::string& value, int64_t unbounded_ms);

// The report: the range, the rate card, the total and (with `by`) the groups
// (tenant groups with their names), and (with `items`) every item, at most
// `max_items`.
nlohmann::json usage_report(const std::vector<usage::Item>& items, std::optional<usage::GroupBy> by,
                            bool with_items, size_t max_items, const usage::RateCard& card,
                            const std::map<std::string, std::string>& tenant_names);

}  // namespace airlock::service
