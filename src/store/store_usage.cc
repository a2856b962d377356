// Store: the rows of the usage report. Jobs that finished in the window,
// sessions that closed in it and the ones still open, and every object kept
// for a tenant (artifacts, snapshots, uploads) that was stored before the
// window's end. Figures inside stored JSON are read by usage_json.h (text
// that is not JSON counts as nothing), so the SQL is the same on both backends.
#include "store/store.h"
#include "store/usage_json.h"

namespace airlock::store {

namespace {

// ?1 tenant ("" = all), ?2 from, ?3 to ("" = unbounded). The same SQL on
// both backends: figures inside stored JSON are read by usage_json.h.
constexpr const char* kJobs =
    "SELECT j.id, j.tenant_id, j.finished_at, j.outcome, COALESCE(r.json, '') FROM jobs j "
    "LEFT JOIN records r ON r.job_id = j.id "
    "WHERE (?1 = '' OR j.tenant_id = ?1) AND j.state = 'finished' "
    "AND (?2 = '' OR j.finished_at >= ?2) AND (?3 = '' OR j.finished_at < ?3) ORDER BY j.n";

constexpr const char* kClosedSessions =
    "SELECT s.id, s.tenant_id, s.created_at, s.closed_at, s.close_reason, COALESCE(r.json, ''), "
    "s.request_json FROM sessions s LEFT JOIN records r ON r.job_id = s.id "
    "WHERE (?1 = '' OR s.tenant_id = ?1) AND s.state = 'closed' "
    "AND (?2 = '' OR s.closed_at >= ?2) AND (?3 = '' OR s.closed_at < ?3) ORDER BY s.n";

// An open session's usage so far: its ended calls, a row each (one row with
// a NULL call when it has none).
constexpr const char* kOpenSessions =
    "SELECT s.id, s.tenant_id, s.created_at, s.request_json, c.call_json "
    "FROM sessions s LEFT JOIN session_calls c ON c.session_id = s.id "
    "WHERE (?1 = '' OR s.tenant_id = ?1) AND s.state = 'open' "
    "AND (?3 = '' OR s.created_at < ?3) ORDER BY s.n, c.seq";

constexpr const char* kArtifacts =
    "SELECT a.job_id || '/' || a.name, j.tenant_id, j.finished_at, a.size, COALESCE(r.json, '') "
    "FROM artifacts a JOIN jobs j ON j.id = a.job_id LEFT JOIN records r ON r.job_id = j.id "
    "WHERE (?1 = '' OR j.tenant_id = ?1) AND (?3 = '' OR j.finished_at < ?3)";

constexpr const char* kSnapshots =
    "SELECT n.digest, n.tenant_id, n.created_at, n.expires_at, n.size_bytes, COALESCE(s.request_json, '') "
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
  auto tx = Transaction::begin_read(*db_);
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
  // Open sessions: no window start, rows visited rather than read one by one.
  auto each_call = [&](const char* text, auto visit) -> Status {
    auto s = sql(text);
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, tenant_id).bind(3, to);
    return each_row(**s, visit);
  };
  using K = UsageRow::Kind;
  AIRLOCK_TRY(each(kJobs, [](const Statement& r) {
    return UsageRow{K::kJob, r.text(0), r.text(1), "", r.text(2), r.text(3), r.text(4), "", 0};
  }));
  AIRLOCK_TRY(each(kClosedSessions, [](const Statement& r) {
    return UsageRow{K::kSession, r.text(0), r.text(1), r.text(2), r.text(3), r.text(4),
                    closed_session_usage(r.text(5)), stored_string_at(r.text(6), "/image"), 0};
  }));
  {
    // Open now: counted up to now, whatever the window's start. Rows of one
    // session are adjacent (ORDER BY s.n); their calls are summed.
    std::vector<std::pair<UsageRow, std::vector<std::string>>> open;
    AIRLOCK_TRY(each_call(kOpenSessions, [&](const Statement& r) {
      if (open.empty() || open.back().first.id != r.text(0))
        open.push_back({UsageRow{K::kSession, r.text(0), r.text(1), r.text(2), "", "open", "",
                                 stored_string_at(r.text(3), "/image"), 0},
                        {}});
      if (!r.is_null(4)) open.back().second.push_back(r.text(4));
    }));
    for (auto& [row, calls] : open) {
      row.json = open_session_usage(calls);
      out.push_back(std::move(row));
    }
  }
  AIRLOCK_TRY(each(kArtifacts, [](const Statement& r) {
    return UsageRow{K::kArtifact, r.text(0), r.text(1), r.text(2), "", "", "", stored_string_at(r.text(4), "/image/name"),
                    non_negative(r.int64(3))};
  }, false));
  AIRLOCK_TRY(each(kSnapshots, [](const Statement& r) {
    return UsageRow{K::kSnapshot, r.text(0), r.text(1), r.text(2), r.text(3), "", "", stored_string_at(r.text(5), "/image"),
                    non_negative(r.int64(4))};
  }, false));
  AIRLOCK_TRY(each(kUploads, [](const Statement& r) {
    return UsageRow{K::kUpload, r.text(0), r.text(1), r.text(2), "", "", "", "", non_negative(r.int64(3))};
  }, false));
  return out;
}

}  // namespace airlock::store
