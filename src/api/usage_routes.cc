#include "api/usage_routes.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "api/route_helpers.h"
#include "base/json_parse.h"
#include "jobs/record.h"

namespace airlock::service {

using api::HttpResponse;
using json = nlohmann::json;

namespace {

const char* kind_name(usage::ItemKind k) {
  switch (k) {
    case usage::ItemKind::kJob: return "job";
    case usage::ItemKind::kSession: return "session";
    case usage::ItemKind::kStorage: return "storage";
  }
  return "?";
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<TimeBound> parse_time_bound(const std::string& value, int64_t unbounded_ms) {
  if (value.empty()) return TimeBound{"", unbounded_ms};
  std::string full = value.size() == 10 ? value + "T00:00:00Z" : value;
  auto ms = usage::parse_time_ms(full);
  if (!ms) return std::nullopt;
  // Stored times are "YYYY-MM-DDTHH:MM:SS.mmmZ" and compare as text; a bound
  // without milliseconds is written with them so it compares the same way.
  std::string text = full;
  if (text.size() == 20) text.insert(19, ".000");
  return TimeBound{text, *ms};
}

std::vector<usage::Item> usage_items(const std::vector<store::UsageRow>& rows, int64_t from_ms, int64_t to_ms,
                                     int64_t now) {
  using K = store::UsageRow::Kind;
  std::vector<usage::Item> items;
  int64_t until = std::min(to_ms, now);
  for (const auto& r : rows) {
    switch (r.kind) {
      case K::kJob:
        items.push_back(usage::job_item(r.id, r.tenant_id, r.ended_at, r.outcome,
                                        parse_json_or_discarded(r.json, kMaxStoredJsonDepth)));
        break;
      case K::kSession: {
        std::string ended = r.ended_at.empty() ? jobs::rfc3339(std::chrono::system_clock::time_point(
                                                     std::chrono::milliseconds(now)))
                                               : r.ended_at;
        auto u = parse_json_or_discarded(r.json, kMaxStoredJsonDepth);
        items.push_back(usage::session_item(r.id, r.tenant_id, r.started_at, ended, r.outcome, r.image, u));
        break;
      }
      case K::kArtifact:
      case K::kSnapshot:
      case K::kUpload: {
        auto since = usage::parse_time_ms(r.started_at);
        if (!since) break;
        int64_t kept_until = until;
        if (auto expires = usage::parse_time_ms(r.ended_at)) kept_until = std::min(kept_until, *expires);
        std::string image = r.kind == K::kUpload ? "uploads" : r.image.empty() ? "host" : r.image;
        for (auto& it : usage::storage_items(r.id, r.tenant_id, image, r.bytes, *since, kept_until, from_ms, until))
          items.push_back(std::move(it));
        break;
      }
    }
  }
  return items;
}

json usage_report(const std::vector<usage::Item>& items, std::optional<usage::GroupBy> by, bool with_items,
                  size_t max_items, const usage::RateCard& card, const std::map<std::string, std::string>& names) {
  json out = json::object();
  out["rates"] = usage::to_json(card);
  auto all = usage::group_items(items, usage::GroupBy::kTenant, card);
  out["total"] = usage::to_json(usage::total_of(all), card);
  if (by) {
    auto groups = *by == usage::GroupBy::kTenant ? all : usage::group_items(items, *by, card);
    json list = json::array();
    for (const auto& g : groups) {
      json j = usage::to_json(g, card);
      if (*by == usage::GroupBy::kTenant)
        if (auto it = names.find(g.key); it != names.end()) j["name"] = it->second;
      list.push_back(std::move(j));
    }
    out["groups"] = std::move(list);
  }
  if (with_items) {
    json list = json::array();
    for (size_t i = 0; i < items.size() && i < max_items; ++i) {
      const auto& it = items[i];
      list.push_back({{"kind", kind_name(it.kind)}, {"id", it.id}, {"tenant", it.tenant}, {"day", it.day},
                      {"image", it.image}, {"outcome", it.outcome}, {"usage", usage::to_json(it.figures)},
                      {"cost", usage::to_json(usage::cost_of(it.figures, card), card)}});
    }
    out["items"] = std::move(list);
    out["items_truncated"] = items.size() > max_items;
  }
  return out;
}

void install_usage_routes(api::HttpServer& server, JobService& service, store::Store& store) {
  add(server, service, "GET", "/v1/usage", [&service, &store](const ExchangePtr& ex, const Caller& c) {
    if (auto no = c.lacks({"read", "admin"})) return answer(service, ex, from_error(*no));
    auto from = parse_time_bound(query_param(ex, "from"), std::numeric_limits<int64_t>::min() / 2);
    auto to = parse_time_bound(query_param(ex, "to"), std::numeric_limits<int64_t>::max() / 2);
    if (!from || !to)
      return answer(service, ex,
                    HttpResponse::error(400, "bad_request", "from and to: YYYY-MM-DD or RFC 3339 UTC (...Z)"));
    std::optional<usage::GroupBy> by;
    if (std::string g = query_param(ex, "group_by"); !g.empty()) {
      auto parsed = usage::parse_group_by(g);
      if (!parsed) return answer(service, ex, HttpResponse::error(400, "bad_request", parsed.error().what));
      by = *parsed;
    }
    std::string detail = query_param(ex, "items");
    if (!detail.empty() && detail != "0" && detail != "1")
      return answer(service, ex, HttpResponse::error(400, "bad_request", "items: 0 or 1"));
    // What the tenant's own figures and storage were before (kept as they were).
    auto own = service.usage(c, from->text.empty() ? "0000" : from->text, to->text.empty() ? "9999" : to->text);
    if (!own) return answer(service, ex, from_error(own.error()));
    bool everyone = c.can("admin");
    auto rows = store.usage_rows(everyone ? "" : c.tenant.id, from->text, to->text);
    if (!rows) return answer(service, ex, from_error({500, "internal", rows.error().message()}));
    std::map<std::string, std::string> names;
    if (auto tenants = store.tenants())
      for (const auto& t : *tenants) names[t.id] = t.name;
    int64_t now = now_ms();
    auto items = usage_items(*rows, from->ms, to->ms, now);
    json report = usage_report(items, by, detail == "1", 1000, service.config().rates, names);
    json body = *own;
    for (auto& [k, v] : report.items()) body[k] = v;
    body["scope"] = everyone ? "all_tenants" : "tenant";
    if (by) body["group_by"] = query_param(ex, "group_by");
    answer(service, ex, HttpResponse::json(200, body));
  });
}

}  // namespace airlock::service
