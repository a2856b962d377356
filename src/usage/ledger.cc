#include "usage/ledger.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace airlock::usage {

namespace {

constexpr int64_t kDayMs = 86'400'000;

uint64_t figure(const nlohmann::json& obj, const char* name) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_number()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, it->get<int64_t>()));
  double d = it->get<double>();
  return d > 0 && d < 1.8e19 ? static_cast<uint64_t>(d) : 0;
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {  // H. Hinnant's algorithm
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

std::optional<int64_t> parse_time_ms(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.fff...]Z
  if (t.size() < 20 || t.back() != 'Z') return std::nullopt;
  auto num = [&](size_t at, size_t n) -> std::optional<int> {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  if (t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':') return std::nullopt;
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), s = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !s || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *s > 60)
    return std::nullopt;
  int64_t ms = 0;
  size_t i = 19;
  if (t[i] == '.') {
    int64_t scale = 100;
    for (++i; i + 1 < t.size(); ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      ms += (t[i] - '0') * scale;
      scale /= 10;
    }
    if (i == 20) return std::nullopt;
  }
  if (i != t.size() - 1) return std::nullopt;
  int64_t days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  return ((days * 24 + *h) * 60 + *mi) * 60'000 + *s * 1000 + ms;
}

std::string day_of(int64_t ms) {
  time_t secs = static_cast<time_t>((ms >= 0 ? ms : ms - 999) / 1000);
  struct tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  return buf;
}

Item job_item(const std::string& id, const std::string& tenant, const std::string& finished_at,
              const std::string& outcome, const nlohmann::json& record) {
  Item it;
  it.kind = ItemKind::kJob;
  it.id = id;
  it.tenant = tenant;
  it.outcome = outcome;
  auto at = parse_time_ms(finished_at);
  it.day = at ? day_of(*at) : "unknown";
  it.image = "host";
  if (record.is_object()) {
    auto image = record.find("image");
    if (image != record.end() && image->is_object() && image->value("name", nlohmann::json()).is_string())
      it.image = (*image)["name"].get<std::string>();
    auto usage = record.find("usage");
    if (usage != record.end()) {
      it.figures.wall_ms = figure(*usage, "wall_ms");
      it.figures.cpu_ms = figure(*usage, "cpu_ms");
      it.figures.memory_byte_ms =
          static_cast<unsigned __int128>(figure(*usage, "peak_memory_bytes")) * it.figures.wall_ms;
    }
    auto network = record.find("network");
    if (network != record.end() && network->is_array())
      for (const auto& attempt : *network) it.figures.egress_bytes += figure(attempt, "bytes_up") + figure(attempt, "bytes_down");
  }
  return it;
}

Item session_item(const std::string& id, const std::string& tenant, const std::string& created_at,
                  const std::string& ended_at, const std::string& reason, const std::string& image,
                  const nlohmann::json& usage) {
  Item it;
  it.kind = ItemKind::kSession;
  it.id = id;
  it.tenant = tenant;
  it.outcome = reason;
  it.image = image.empty() ? "host" : image;
  auto from = parse_time_ms(created_at), to = parse_time_ms(ended_at);
  it.day = to ? day_of(*to) : "unknown";
  if (from && to && *to > *from) it.figures.wall_ms = it.figures.session_ms = static_cast<uint64_t>(*to - *from);
  it.figures.cpu_ms = figure(usage, "cpu_ms");
  it.figures.memory_byte_ms = static_cast<unsigned __int128>(figure(usage, "peak_memory_bytes")) * it.figures.wall_ms;
  it.figures.egress_bytes = figure(usage, "egress_bytes");  // a closed session's gateway traffic (store_usage.cc)
  return it;
}

std::vector<Item> storage_items(const std::string& id, const std::string& tenant, const std::string& image,
                                uint64_t bytes, int64_t since, int64_t until, int64_t window_from,
                                int64_t window_to) {
  std::vector<Item> out;
  int64_t from = std::max(since, window_from), to = std::min(until, window_to);
  while (from < to) {
    int64_t day_end = (from >= 0 ? from / kDayMs : (from - kDayMs + 1) / kDayMs) * kDayMs + kDayMs;
    int64_t end = std::min(to, day_end);
    Item it;
    it.kind = ItemKind::kStorage;
    it.id = id;
    it.tenant = tenant;
    it.image = image;
    it.day = day_of(from);
    it.figures.storage_byte_ms = static_cast<unsigned __int128>(bytes) * static_cast<uint64_t>(end - from);
    out.push_back(std::move(it));
    from = end;
  }
  return out;
}

Result<GroupBy> parse_group_by(std::string_view text) {
  if (text == "tenant") return GroupBy::kTenant;
  if (text == "day") return GroupBy::kDay;
  if (text == "image") return GroupBy::kImage;
  return fail(ErrorKind::kInvalid, "group_by: tenant, day or image");
}

std::vector<Group> group_items(const std::vector<Item>& items, GroupBy by, const RateCard& card) {
  std::map<std::string, Group> groups;
  for (const auto& it : items) {
    const std::string& key = by == GroupBy::kTenant ? it.tenant : by == GroupBy::kDay ? it.day : it.image;
    Group& g = groups[key];
    g.key = key;
    g.jobs += it.kind == ItemKind::kJob;
    g.sessions += it.kind == ItemKind::kSession;
    g.figures += it.figures;
    g.cost += cost_of(it.figures, card);
  }
  std::vector<Group> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

Group total_of(const std::vector<Group>& groups) {
  Group t;
  t.key = "total";
  for (const auto& g : groups) {
    t.jobs += g.jobs;
    t.sessions += g.sessions;
    t.figures += g.figures;
    t.cost += g.cost;
  }
  return t;
}

nlohmann::json to_json(const Group& g, const RateCard& card) {
  return {{"key", g.key}, {"jobs", g.jobs}, {"sessions", g.sessions}, {"usage", to_json(g.figures)},
          {"cost", to_json(g.cost, card)}};
}

}  // namespace airlock::usage
