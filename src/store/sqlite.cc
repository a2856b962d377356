#include "store/sqlite.h"

#include <cerrno>
#include <utility>

#include "base/check.h"

namespace airlock::store {

namespace {

// The errno behind a result code, so callers can tell a full disk apart:
// SQLite answers SQLITE_FULL for ENOSPC and an I/O error carrying the
// system's errno for the rest (EDQUOT, EIO, ...).
int errno_of(sqlite3* db, int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL: return ENOSPC;
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN: return sqlite3_system_errno(db);
    default: return 0;
  }
}

}  // namespace

std::unexpected<Error> sqlite_fail(sqlite3* db, const std::string& what) {
  if (!db) return fail(what + ": out of memory");
  int rc = sqlite3_extended_errcode(db);
  return fail_with(what + ": " + sqlite3_errmsg(db) + " (code " + std::to_string(rc) + ")", errno_of(db, rc));
}

namespace {

// One prepared sqlite3_stmt.
class SqliteStatement final : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, uint64_t* vm_steps)
      : db_(db), stmt_(stmt), vm_steps_(vm_steps) {}

  void bind_text(int index, std::string_view text) override {
    note(sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                             SQLITE_UTF8));
  }
  void bind_int64(int index, int64_t value) override {
    note(sqlite3_bind_int64(stmt_.get(), index, value));
  }
  void bind_null(int index) override { note(sqlite3_bind_null(stmt_.get(), index)); }

  Result<bool> step() override {
    // A wrong parameter index is a bug; a value too big for SQLite is bad input.
    AIRLOCK_CHECK(bind_error_ != SQLITE_RANGE);
    if (bind_error_ != SQLITE_OK)
      return fail(std::string("bind a parameter: ") + sqlite3_errstr(bind_error_));
    int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return sqlite_fail(db_, std::string("sql: ") + sqlite3_sql(stmt_.get()));
  }

  void reset() override {
    *vm_steps_ += static_cast<uint64_t>(sqlite3_stmt_status(stmt_.get(), SQLITE_STMTSTATUS_VM_STEP, 1));
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
    bind_error_ = SQLITE_OK;
  }

  std::string text(int column) const override {
    const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), column)));
  }
  int64_t int64(int column) const override { return sqlite3_column_int64(stmt_.get(), column); }
  bool is_null(int column) const override {
    return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
  }
  // One connection, used by one statement at a time (the Store's mutex).
  int changes() const override { return sqlite3_changes(db_); }

 private:
  void note(int rc) {
    if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  }
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  uint64_t* vm_steps_;  // the connection's count (Database::vm_steps)
  int bind_error_ = SQLITE_OK;
};

}  // namespace

Result<Database> Database::open(const std::string& path) {
  sqlite3* raw = nullptr;
  // NOMUTEX: the Store's own mutex serializes every use of the connection.
  int rc = sqlite3_open_v2(path.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                               SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE,
                           nullptr);
  Database db;
  db.db_.reset(raw);  // closed on every path, even when the open failed
  if (rc != SQLITE_OK) return sqlite_fail(raw, "open " + path);
  return db;
}

Status Database::exec(const char* sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return {};
  std::string text = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return fail_with(std::string("sql: ") + sql + ": " + text, errno_of(db_.get(), rc));
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return sqlite_fail(db_.get(), "prepare " + std::string(sql));
  }
  return Statement(std::make_unique<SqliteStatement>(db_.get(), stmt, vm_steps_.get()));
}

}  // namespace airlock::store
