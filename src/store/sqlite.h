// The SQLite backend of the store's connection interface (store/sql.h): a
// thin RAII layer over the SQLite C API, a move-only connection whose
// statements bind ?N parameters natively.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/result.h"
#include "store/sql.h"

namespace airlock::store {

// "what: <sqlite message> (code N)".
std::unexpected<Error> sqlite_fail(sqlite3* db, const std::string& what);

class Database final : public Connection {
 public:
  // Opens (creating if missing) the database file at `path`.
  static Result<Database> open(const std::string& path);

  sqlite3* get() const { return db_.get(); }
  // Runs constant SQL without parameters (schema, pragmas). Never pass values here.
  Dialect dialect() const override { return Dialect::kSqlite; }
  Status exec(const char* sql) override;
  Result<Statement> prepare(std::string_view sql) override;
  bool in_transaction() const override { return !sqlite3_get_autocommit(db_.get()); }
  uint64_t vm_steps() const override { return *vm_steps_; }

 private:
  struct Close {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Close> db_;
  // Virtual machine steps of every statement run so far, added up at each
  // reset (SQLITE_STMTSTATUS_VM_STEP). On the heap: statements keep a
  // pointer to it, and a Database is moved after it is opened.
  std::unique_ptr<uint64_t> vm_steps_ = std::make_unique<uint64_t>(0);
};

}  // namespace airlock::store
