// Store: sessions and their calls (issue 6). A session's record joins its
// tenant's chain when it closes, like a job's.
#include <nlohmann/json.hpp>

#include "jobs/record.h"
#include "store/row_readers.h"
#include "store/store.h"

namespace airlock::store {

SessionRow read_session_row(const Statement& s) {
  SessionRow r;
  r.id = s.text(0);
  r.tenant_id = s.text(1);
  r.key_id = s.text(2);
  r.state = s.text(3);
  r.request_json = s.text(4);
  r.created_at = s.text(5);
  r.closed_at = s.text(6);
  r.close_reason = s.text(7);
  r.node_id = s.text(8);
  return r;
}

namespace {

SessionRow read_session(const Statement& s) { return read_session_row(s); }

SessionCallRow read_call(const Statement& s) {
  SessionCallRow c;
  c.session_id = s.text(0);
  c.seq = s.int64(1);
  c.id = s.text(2);
  c.call_json = s.text(3);
  return c;
}

}  // namespace

Status Store::create_session(const SessionRow& row) {
  if (row.id.empty() || row.tenant_id.empty()) return fail("a session needs an id and a tenant");
  return write([&]() -> Status {
    auto s = sql("INSERT INTO sessions (id, tenant_id, key_id, state, request_json, created_at, node_id) "
                 "VALUES (?1, ?2, ?3, 'open', ?4, ?5, ?6)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.id).bind(2, row.tenant_id).bind(3, row.key_id).bind(4, row.request_json).bind(5, row.created_at)
        .bind(6, row.node_id);
    return (*s)->run();
  });
}

Result<std::optional<SessionRow>> Store::session(const std::string& tenant_id, const std::string& id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " SESSION_COLUMNS " FROM sessions WHERE id = ?1 AND tenant_id = ?2");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, id).bind(2, tenant_id);
  return first_row<SessionRow>(**s, read_session);
}

Result<std::vector<SessionRow>> Store::sessions(const std::string& tenant_id, int limit) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " SESSION_COLUMNS " FROM sessions WHERE tenant_id = ?1 "
               "ORDER BY created_at DESC, n DESC LIMIT ?2");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, static_cast<int64_t>(limit < 1 ? 50 : std::min(limit, 1000)));
  return collect_rows<SessionRow>(**s, read_session);
}

Result<std::optional<SessionRow>> Store::session_of_any_tenant(const std::string& id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " SESSION_COLUMNS " FROM sessions WHERE id = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, id);
  return first_row<SessionRow>(**s, read_session);
}

Result<std::vector<SessionRow>> Store::sessions_of_every_tenant(int limit) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " SESSION_COLUMNS " FROM sessions ORDER BY created_at DESC, n DESC LIMIT ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, static_cast<int64_t>(limit < 1 ? 50 : std::min(limit, 1000)));
  return collect_rows<SessionRow>(**s, read_session);
}

Result<std::vector<SessionRow>> Store::open_sessions() {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " SESSION_COLUMNS " FROM sessions WHERE state = 'open' ORDER BY n");
  if (!s) return std::unexpected(s.error());
  return collect_rows<SessionRow>(**s, read_session);
}

Status Store::add_session_call(const SessionCallRow& call) {
  if (!nlohmann::json::accept(call.call_json)) return fail("call '" + call.id + "' is not stored as JSON");
  return write([&]() -> Status {
    auto s = sql("INSERT INTO session_calls (session_id, seq, id, call_json) VALUES (?1, ?2, ?3, ?4)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, call.session_id).bind(2, call.seq).bind(3, call.id).bind(4, call.call_json);
    return (*s)->run();
  });
}

Result<std::vector<SessionCallRow>> Store::session_calls(const std::string& session_id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT session_id, seq, id, call_json FROM session_calls WHERE session_id = ?1 ORDER BY seq");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, session_id);
  return collect_rows<SessionCallRow>(**s, read_call);
}

Result<std::optional<SessionCallRow>> Store::session_call(const std::string& tenant_id, const std::string& call_id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT c.session_id, c.seq, c.id, c.call_json FROM session_calls c "
               "JOIN sessions s ON s.id = c.session_id WHERE c.id = ?1 AND s.tenant_id = ?2");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, call_id).bind(2, tenant_id);
  return first_row<SessionCallRow>(**s, read_call);
}

Result<std::optional<SessionCallRow>> Store::session_call_of_any_tenant(const std::string& call_id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT session_id, seq, id, call_json FROM session_calls WHERE id = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, call_id);
  return first_row<SessionCallRow>(**s, read_call);
}

Result<StoredRecord> Store::close_session(const std::string& id, const std::string& reason,
                                          const std::string& closed_at, const std::string& record_json) {
  if (reason.empty()) return fail("closing session '" + id + "' without a reason");
  if (!nlohmann::json::accept(record_json)) return fail("the record of session '" + id + "' is not JSON");
  std::string at = closed_at.empty() ? jobs::now_rfc3339() : closed_at;
  StoredRecord record;
  auto st = write([&]() -> Status {
    std::string tenant_id;
    {
      auto s = sql("SELECT tenant_id, state FROM sessions WHERE id = ?1");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, id);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) return fail("no session '" + id + "'");
      if ((*s)->text(1) != "open") return fail("session '" + id + "' is already closed");
      tenant_id = (*s)->text(0);
    }
    record = StoredRecord{};
    record.tenant_id = tenant_id;
    record.job_id = id;
    record.json = record_json;
    record.created_at = at;
    if (auto st = append_record_locked(record); !st) return st;
    auto update = sql("UPDATE sessions SET state = 'closed', closed_at = ?2, close_reason = ?3 WHERE id = ?1");
    if (!update) return std::unexpected(update.error());
    (*update)->bind(1, id).bind(2, at).bind(3, reason);
    return (*update)->run();
  });
  if (!st) return std::unexpected(st.error());
  return record;
}

}  // namespace airlock::store
