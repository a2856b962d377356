#include "usage/estimate.h"

#include <algorithm>
#include <set>

namespace airlock::usage {

namespace {

using json = nlohmann::json;
using u128 = unsigned __int128;

Result<uint64_t> whole(const json& obj, const char* key, const std::string& at, uint64_t max) {
  if (!obj.contains(key)) return uint64_t{0};
  const json& v = obj[key];
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    return fail(ErrorKind::kInvalid, at + "." + key + ": a whole number >= 0");
  uint64_t n = v.get<uint64_t>();
  if (n > max) return fail(ErrorKind::kInvalid, at + "." + key + ": at most " + std::to_string(max));
  return n;
}

Status known(const json& obj, const std::string& at, const std::set<std::string>& fields) {
  if (!obj.is_object()) return fail(ErrorKind::kInvalid, at + ": must be an object");
  for (const auto& [k, v] : obj.items())
    if (!fields.count(k)) return fail(ErrorKind::kInvalid, at + ": unknown field \"" + k + "\"");
  return {};
}

std::string name_of(const json& obj, const std::string& at) {
  auto it = obj.find("name");
  return it != obj.end() && it->is_string() ? it->get<std::string>() : at;
}

json line(const std::string& name, const Figures& f, const RateCard& card) {
  return {{"name", name}, {"usage", to_json(f)}, {"cost", to_json(cost_of(f, card), card)}};
}

uint64_t measured(const json& usage, const char* key) {
  auto it = usage.find(key);
  if (it == usage.end() || !it->is_number_integer()) return 0;
  return it->is_number_unsigned() ? it->get<uint64_t>() : static_cast<uint64_t>(std::max<int64_t>(0, it->get<int64_t>()));
}

// "0.123456" (6 places, from to_json(Figures)) -> millionths.
u128 millionths(const json& usage, const char* key) {
  auto it = usage.find(key);
  if (it == usage.end() || !it->is_string()) return 0;
  auto v = parse_decimal(it->get<std::string>(), key);
  return v ? static_cast<u128>(*v / 1'000'000) : 0;
}

}  // namespace

Result<Workload> parse_workload(const json& j) {
  AIRLOCK_TRY(known(j, "workload", {"tasks", "sessions"}));
  Workload w;
  constexpr uint64_t kMax = 1'000'000'000;
  if (j.contains("tasks")) {
    if (!j["tasks"].is_array() || j["tasks"].size() > 100) return fail(ErrorKind::kInvalid, "tasks: an array of at most 100");
    for (size_t i = 0; i < j["tasks"].size(); ++i) {
      const json& t = j["tasks"][i];
      std::string at = "tasks[" + std::to_string(i) + "]";
      AIRLOCK_TRY(known(t, at, {"name", "jobs_per_day", "wall_ms", "cpu_ms", "peak_memory_mb", "egress_kb", "output_mb", "kept_days"}));
      TaskType tt;
      tt.name = name_of(t, at);
      for (auto [key, field] : std::vector<std::pair<const char*, uint64_t TaskType::*>>{
               {"jobs_per_day", &TaskType::jobs_per_day}, {"wall_ms", &TaskType::wall_ms}, {"cpu_ms", &TaskType::cpu_ms},
               {"peak_memory_mb", &TaskType::peak_memory_mb}, {"egress_kb", &TaskType::egress_kb},
               {"output_mb", &TaskType::output_mb}, {"kept_days", &TaskType::kept_days}}) {
        auto v = whole(t, key, at, kMax);
        if (!v) return std::unexpected(v.error());
        tt.*field = *v;
      }
      w.tasks.push_back(tt);
    }
  }
  if (j.contains("sessions")) {
    if (!j["sessions"].is_array() || j["sessions"].size() > 100) return fail(ErrorKind::kInvalid, "sessions: an array of at most 100");
    for (size_t i = 0; i < j["sessions"].size(); ++i) {
      const json& s = j["sessions"][i];
      std::string at = "sessions[" + std::to_string(i) + "]";
      AIRLOCK_TRY(known(s, at, {"name", "sessions_per_day", "minutes", "cpu_ms", "peak_memory_mb"}));
      SessionType st;
      st.name = name_of(s, at);
      for (auto [key, field] : std::vector<std::pair<const char*, uint64_t SessionType::*>>{
               {"sessions_per_day", &SessionType::sessions_per_day}, {"minutes", &SessionType::minutes},
               {"cpu_ms", &SessionType::cpu_ms}, {"peak_memory_mb", &SessionType::peak_memory_mb}}) {
        auto v = whole(s, key, at, kMax);
        if (!v) return std::unexpected(v.error());
        st.*field = *v;
      }
      w.sessions.push_back(st);
    }
  }
  if (w.tasks.empty() && w.sessions.empty()) return fail(ErrorKind::kInvalid, "workload: no tasks and no sessions");
  return w;
}

json estimate_month(const Workload& w, const RateCard& card) {
  json lines = json::array();
  Figures total;
  Cost total_cost;  // the sum of the lines' costs, as /v1/usage sums its items'
  auto add = [&](const std::string& name, const Figures& f) {
    total += f;
    total_cost += cost_of(f, card);
    lines.push_back(line(name, f, card));
  };
  for (const auto& t : w.tasks) {
    uint64_t n = t.jobs_per_day * kDaysPerMonth;
    Figures f;
    f.wall_ms = n * t.wall_ms;
    f.cpu_ms = n * t.cpu_ms;
    f.memory_byte_ms = static_cast<u128>(n) * t.peak_memory_mb * 1'000'000 * t.wall_ms;
    f.egress_bytes = n * t.egress_kb * 1000;
    // A steady month: jobs_per_day * min(kept_days, 30) days of outputs are kept all month.
    uint64_t kept = std::min<uint64_t>(t.kept_days, kDaysPerMonth);
    f.storage_byte_ms =
        static_cast<u128>(t.jobs_per_day) * kept * t.output_mb * 1'000'000 * (kDaysPerMonth * 86'400'000);
    add(t.name, f);
  }
  for (const auto& s : w.sessions) {
    uint64_t n = s.sessions_per_day * kDaysPerMonth;
    Figures f;
    f.wall_ms = f.session_ms = n * s.minutes * 60'000;
    f.cpu_ms = n * s.cpu_ms;
    f.memory_byte_ms = static_cast<u128>(n) * s.peak_memory_mb * 1'000'000 * s.minutes * 60'000;
    add(s.name, f);
  }
  json out = {{"month_days", kDaysPerMonth}, {"lines", lines}, {"rates", to_json(card)}};
  out["total"] = {{"name", "total"}, {"usage", to_json(total)}, {"cost", to_json(total_cost, card)}};
  out["assumptions"] = json::array(
      {"a month is 30 days; GB is 10^9 bytes; MB is 10^6 bytes",
       "memory is charged as the peak held for the whole wall time",
       "outputs are kept for kept_days (at most the month) and every day adds jobs_per_day of them: a steady month",
       "sessions are charged for all their minutes, idle or not",
       "the usage of each job and session is the typical one given, not measured"});
  return out;
}

json estimate_from_measured(const json& total, uint64_t days, const RateCard& card) {
  json usage = total.is_object() ? total.value("usage", json::object()) : json::object();
  auto scale30 = [&](u128 v) { return days ? v * kDaysPerMonth / days : 0; };
  Figures f;
  f.wall_ms = static_cast<uint64_t>(scale30(measured(usage, "wall_ms")));
  f.cpu_ms = static_cast<uint64_t>(scale30(measured(usage, "cpu_ms")));
  f.egress_bytes = static_cast<uint64_t>(scale30(measured(usage, "egress_bytes")));
  f.session_ms = static_cast<uint64_t>(scale30(measured(usage, "session_ms")));
  // GB-s and GB-h come as decimals: back to byte-ms (a millionth of a GB-s is 10^9 * 1000 / 10^6
  // byte-ms, of a GB-h 10^9 * 3600000 / 10^6).
  f.memory_byte_ms = scale30(millionths(usage, "memory_gb_s") * 1'000'000);
  f.storage_byte_ms = scale30(millionths(usage, "storage_gb_h") * 3'600'000'000ull);
  json out = {{"month_days", kDaysPerMonth}, {"measured_days", days}, {"rates", to_json(card)}};
  out["total"] = line("total", f, card);
  out["assumptions"] = json::array(
      {"the last " + std::to_string(days) + " days as measured by GET /v1/usage, scaled to 30 days",
       "a month is 30 days; GB is 10^9 bytes", "the same rates as the service's [rates] at the time of the estimate"});
  return out;
}

}  // namespace airlock::usage
