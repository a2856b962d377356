#include "support/chain_rewrite.h"

#include <sqlite3.h>

#include <vector>

#include "store/chain.h"

namespace airlock::testing {
namespace {

struct Row {
  int64_t seq;
  std::string prev, json;
};

std::string exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = rc == SQLITE_OK ? "" : (err ? err : "error");
  sqlite3_free(err);
  return msg;
}

}  // namespace

std::string rewrite_chain(const std::string& db_path, const std::string& tenant_id, int64_t seq,
                          const std::function<std::string(const std::string&)>& edit) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return "open failed";
  std::vector<Row> rows;
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT seq, prev_hash, json FROM records WHERE tenant_id = ?1 ORDER BY seq",
                     -1, &s, nullptr);
  sqlite3_bind_text(s, 1, tenant_id.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(s) == SQLITE_ROW)
    rows.push_back({sqlite3_column_int64(s, 0), reinterpret_cast<const char*>(sqlite3_column_text(s, 1)),
                    reinterpret_cast<const char*>(sqlite3_column_text(s, 2))});
  sqlite3_finalize(s);
  std::string err = exec(db, "BEGIN; DROP TRIGGER IF EXISTS records_append_only");
  std::string prev = rows.empty() ? "" : rows.front().prev;
  bool found = false;
  for (auto& r : rows) {
    if (!err.empty()) break;
    if (r.seq == seq) {
      r.json = edit(r.json);
      found = true;
    }
    std::string hash = store::record_hash(prev, r.json);
    sqlite3_prepare_v2(db, "UPDATE records SET prev_hash = ?1, hash = ?2, json = ?3 "
                           "WHERE tenant_id = ?4 AND seq = ?5", -1, &s, nullptr);
    sqlite3_bind_text(s, 1, prev.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, hash.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, r.json.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 4, tenant_id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 5, r.seq);
    if (sqlite3_step(s) != SQLITE_DONE) err = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    prev = hash;
  }
  if (err.empty() && !found) err = "no record at that seq";
  if (err.empty())
    err = exec(db, "UPDATE chain_heads SET hash = '" + prev + "' WHERE tenant_id = '" + tenant_id + "'");
  exec(db, err.empty() ? "COMMIT" : "ROLLBACK");
  sqlite3_close(db);
  return err;
}

}  // namespace airlock::testing
