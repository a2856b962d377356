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

Statement& Statement::bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_.get(), index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Result<bool> Statement::step() {
  AIRLOCK_CHECK(stmt_ != nullptr);
  // A wrong parameter index is a bug; a value too big for SQLite is bad input.
  AIRLOCK_CHECK(bind_error_ != SQLITE_RANGE);
  if (bind_error_ != SQLITE_OK)
    return fail(std::string("bind a parameter: ") + sqlite3_errstr(bind_error_));
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sqlite_fail(db_, std::string("sql: ") + sqlite3_sql(stmt_.get()));
}

Status Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = SQLITE_OK;
}

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_.get(), column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), column)));
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

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
  return Statement(db_.get(), stmt);
}

Result<Transaction> Transaction::begin(Database& db) {
  if (auto st = db.exec("BEGIN IMMEDIATE"); !st) return std::unexpected(st.error());
  return Transaction(&db);
}

Result<Transaction> Transaction::begin_read(Database& db) {
  if (auto st = db.exec("BEGIN DEFERRED"); !st) return std::unexpected(st.error());
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  AIRLOCK_CHECK(db_ != nullptr);
  auto st = db_->exec("COMMIT");
  if (st) db_ = nullptr;
  return st;
}

StatementCache::Lease::~Lease() {
  if (!entry_) return;
  entry_->first.reset();
  entry_->second = false;
}

Result<StatementCache::Lease> StatementCache::get(const char* sql) {
  auto it = entries_.find(sql);
  if (it == entries_.end()) {
    auto stmt = db_->prepare(sql);
    if (!stmt) return std::unexpected(stmt.error());
    it = entries_.emplace(sql, std::pair{std::move(*stmt), false}).first;
  }
  AIRLOCK_CHECK(!it->second.second);  // one use at a time
  it->second.second = true;
  return Lease(&it->second);
}

}  // namespace airlock::store
