// Store: the rows of the usage report. Jobs that finished in the window,
// sessions that closed in it and the ones still open, and every object kept
// for a tenant (artifacts, snapshots, uploads) that was stored before the
// window's end. Figures inside stored JSON are read with json_extract only
// where the text is valid JSON, so one odd row cannot fail the report.
#include <nlohmann/json.hpp>

#include "store/store.h"

namespace airlock::store {

namespace {

// ?1 tenant ("" = all), ?2 from, ?3 to ("" = unbounded).
constexpr const char* kJobs =
    "SELECT j.id, j.tenant_id, j.finished_at, j.outcome, COALESCE(r.json, '') FROM jobs j "
    "LEFT JOIN records r ON r.job_id = j.id "
    "WHERE (?1 = '' OR j.tenant_id = ?1) AND j.state = 'finished' "
    "AND (?2 = '' OR j.finished_at >= ?2) AND (?3 = '' OR j.finished_at < ?3) ORDER BY j.n";

constexpr const char* kClosedSessions =
    "SELECT s.id, s.tenant_id, s.created_at, s.closed_at, s.close_reason, "
    // The record's usage, with egress_bytes: what the session's gateway carried
    // both ways, summed over the attempts of its "network" events.
    "CASE WHEN json_valid(r.json) THEN json_set(COALESCE(json_extract(r.json, '$.usage'), '{}'), '$.egress_bytes', "
    "(SELECT COALESCE(SUM(COALESCE(json_extract(a.value, '$.bytes_up'), 0) + "
    "COALESCE(json_extract(a.value, '$.bytes_down'), 0)), 0) "
    "FROM json_each(r.json, '$.events') e, json_each(e.value, '$.attempts') a "
    "WHERE json_extract(e.value, '$.event') = 'network')) ELSE '{}' END, "
    "CASE WHEN json_valid(s.request_json) THEN COALESCE(json_extract(s.request_json, '$.image'), '') ELSE '' END "
    "FROM sessions s LEFT JOIN records r ON r.job_id = s.id "
    "WHERE (?1 = '' OR s.tenant_id = ?1) AND s.state = 'closed' "
    "AND (?2 = '' OR s.closed_at >= ?2) AND (?3 = '' OR s.closed_at < ?3) ORDER BY s.n";

// An open session's usage so far: the sum of its ended calls.
constexpr const char* kOpenSessions =
    "SELECT s.id, s.tenant_id, s.created_at, "
    "(SELECT json_object('cpu_ms', COALESCE(SUM(json_extract(c.call_json, '$.usage.cpu_ms')), 0), "
    "                    'peak_memory_bytes', COALESCE(MAX(json_extract(c.call_json, '$.usage.peak_memory_bytes')), 0)) "
    " FROM session_calls c WHERE c.session_id = s.id AND json_valid(c.call_json)), "
    "CASE WHEN json_valid(s.request_json) THEN COALESCE(json_extract(s.request_json, '$.image'), '') ELSE '' END "
    "FROM sessions s WHERE (?1 = '' OR s.tenant_id = ?1) AND s.state = 'open' "
    "AND (?3 = '' OR s.created_at < ?3) ORDER BY s.n";

constexpr const char* kArtifacts =
    "SELECT a.job_id || '/' || a.name, j.tenant_id, j.finished_at, a.size, "
    "CASE WHEN json_valid(r.json) THEN COALESCE(json_extract(r.json, '$.image.name'), '') ELSE '' END "
    "FROM artifacts a JOIN jobs j ON j.id = a.job_id LEFT JOIN records r ON r.job_id = j.id "
    "WHERE (?1 = '' OR j.tenant_id = ?1) AND (?3 = '' OR j.finished_at < ?3)";

constexpr const char* kSnapshots =
    "SELECT n.digest, n.tenant_id, n.created_at, n.expires_at, n.size_bytes, "
    "CASE WHEN json_valid(s.request_json) THEN COALESCE(json_extract(s.request_json, '$.image'), '') ELSE '' END "
    "FROM snapshots n LEFT JOIN sessions s ON s.id = n.source "
    "WHERE (?1 = '' OR n.tenant_id = ?1) AND (?3 = '' OR n.created_at < ?3)";

constexpr const char* kUploads =
    "SELECT id, tenant_id, created_at, size FROM files "
    "WHERE (?1 = '' OR tenant_id = ?1) AND (?3 = '' OR created_at < ?3)";

uint64_t non_negative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

}  // namespace

Result<std::vector<UsageRow>> Store::usage_rows(const std::string& tenant_id, const std::string& from,
                                                const std::string& to) {
  std::lock_guard lock(mu_);
  // One read transaction: the rows are of one moment.
  auto tx = Transaction::begin_read(db_);
  if (!tx) return std::unexpected(tx.error());
  std::vector<UsageRow> out;
  // Stored objects count from before the window (only its end bounds
  // them), so their queries have no ?2: binding it would be a range error.
  auto each = [&](const char* text, auto read, bool windowed = true) -> Status {
    auto s = sql(text);
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, tenant_id).bind(3, to);
    if (windowed) (*s)->bind(2, from);
    return each_row(**s, [&](const Statement& r) { out.push_back(read(r)); });
  };
  using K = UsageRow::Kind;
  AIRLOCK_TRY(each(kJobs, [](const Statement& r) {
    return UsageRow{K::kJob, r.text(0), r.text(1), "", r.text(2), r.text(3), r.text(4), "", 0};
  }));
  AIRLOCK_TRY(each(kClosedSessions, [](const Statement& r) {
    return UsageRow{K::kSession, r.text(0), r.text(1), r.text(2), r.text(3), r.text(4), r.text(5), r.text(6), 0};
  }));
  AIRLOCK_TRY(each(kOpenSessions, [](const Statement& r) {
    return UsageRow{K::kSession, r.text(0), r.text(1), r.text(2), "", "open", r.text(3), r.text(4), 0};
  }, false));  // open now: counted up to now, whatever the window's start
  AIRLOCK_TRY(each(kArtifacts, [](const Statement& r) {
    return UsageRow{K::kArtifact, r.text(0), r.text(1), r.text(2), "", "", "", r.text(4), non_negative(r.int64(3))};
  }, false));
  AIRLOCK_TRY(each(kSnapshots, [](const Statement& r) {
    return UsageRow{K::kSnapshot, r.text(0), r.text(1), r.text(2), r.text(3), "", "", r.text(5), non_negative(r.int64(4))};
  }, false));
  AIRLOCK_TRY(each(kUploads, [](const Statement& r) {
    return UsageRow{K::kUpload, r.text(0), r.text(1), r.text(2), "", "", "", "", non_negative(r.int64(3))};
  }, false));
  return out;
}

}  // namespace airlock::store
