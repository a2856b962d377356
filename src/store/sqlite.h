// A thin RAII layer over the SQLite C API: a move-only connection, a move-only
// prepared statement with bound parameters, and a transaction guard. Values
// only ever reach SQL through bind(); SQL text is always a constant.
//
// Nothing here is thread-safe by itself: the Store serializes all use of one
// connection with its mutex.
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

namespace airlock::store {

// "what: <sqlite message> (code N)".
std::unexpected<Error> sqlite_fail(sqlite3* db, const std::string& what);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  // Binds by 1-based index. A failed bind is reported by the next step().
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, int64_t value);
  Statement& bind_null(int index);

  // true: a row is available; false: done.
  Result<bool> step();
  // Steps to completion, for statements that return no rows.
  Status run();
  // Resets for another execution and clears the bindings.
  void reset();

  std::string text(int column) const;
  int64_t int64(int column) const;
  bool is_null(int column) const;

  // Rows changed by the last completed INSERT/UPDATE/DELETE on this connection.
  int changes() const { return sqlite3_changes(db_); }

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
  int bind_error_ = SQLITE_OK;
};

// Calls `visit(const Statement&)` for every row `s` yields.
template <class Visit>
Status each_row(Statement& s, Visit visit) {
  while (true) {
    auto row = s.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
    visit(static_cast<const Statement&>(s));
  }
}

// Every row of `s`, each read into a T by `read(const Statement&)`.
template <class T, class Read>
Result<std::vector<T>> collect_rows(Statement& s, Read read) {
  std::vector<T> out;
  if (auto st = each_row(s, [&](const Statement& r) { out.push_back(read(r)); }); !st)
    return std::unexpected(st.error());
  return out;
}

// The first row of `s` read into a T by `read(const Statement&)`; nullopt when there is none.
template <class T, class Read>
Result<std::optional<T>> first_row(Statement& s, Read read) {
  auto row = s.step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<T>();
  return std::optional<T>(read(static_cast<const Statement&>(s)));
}

class Database {
 public:
  // Opens (creating if missing) the database file at `path`.
  static Result<Database> open(const std::string& path);

  sqlite3* get() const { return db_.get(); }
  // Runs constant SQL without parameters (schema, pragmas). Never pass values here.
  Status exec(const char* sql);
  Result<Statement> prepare(std::string_view sql);

 private:
  struct Close {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Close> db_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so a
// transaction never fails half-way to upgrade it); ROLLBACK on destruction
// unless commit() succeeded. begin_read() is a plain BEGIN: one consistent
// snapshot for several reads, without blocking writers.
class Transaction {
 public:
  static Result<Transaction> begin(Database& db);
  static Result<Transaction> begin_read(Database& db);
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_ = nullptr;
};

// Prepares each constant SQL text once and hands it out reset, for one use at
// a time. Keyed by the text's address: pass string literals only.
class StatementCache {
 public:
  // Resets the statement when it goes out of scope, so that no read
  // transaction stays open between calls (it would hide other processes' writes).
  class Lease {
   public:
    explicit Lease(std::pair<Statement, bool>* entry) : entry_(entry) {}
    Lease(Lease&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Statement* operator->() const { return &entry_->first; }
    Statement& operator*() const { return entry_->first; }

   private:
    std::pair<Statement, bool>* entry_;
  };

  explicit StatementCache(Database* db) : db_(db) {}
  Result<Lease> get(const char* sql);

 private:
  Database* db_;
  std::unordered_map<const char*, std::pair<Statement, bool /* leased */>> entries_;
};

}  // namespace airlock::store
