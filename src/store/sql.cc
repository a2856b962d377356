#include "store/sql.h"

#include "base/check.h"

namespace airlock::store {

Status Statement::run() {
  while (true) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

Result<Transaction> Transaction::begin(Connection& db) {
  const char* sql = db.dialect() == Dialect::kSqlite ? "BEGIN IMMEDIATE" : "BEGIN";
  if (auto st = db.exec(sql); !st) return std::unexpected(st.error());
  return Transaction(&db);
}

Result<Transaction> Transaction::begin_read(Connection& db) {
  const char* sql =
      db.dialect() == Dialect::kSqlite ? "BEGIN DEFERRED" : "BEGIN ISOLATION LEVEL REPEATABLE READ";
  if (auto st = db.exec(sql); !st) return std::unexpected(st.error());
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
