// The store's SQL seam: one connection interface with a SQLite
// (store/sqlite.h) and a PostgreSQL (store/postgres.h) implementation. The
// store's SQL is written once, with ?N placeholders (PostgreSQL's backend
// turns them into $N); values only ever reach SQL through bind(); SQL text is
// always a constant.
//
// Nothing here is thread-safe by itself: the Store serializes all use of one
// connection with its mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"

namespace airlock::store {

enum class Dialect { kSqlite, kPostgres };

// What a backend implements for one prepared statement.
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void bind_text(int index, std::string_view text) = 0;
  virtual void bind_int64(int index, int64_t value) = 0;
  virtual void bind_null(int index) = 0;
  virtual Result<bool> step() = 0;
  virtual void reset() = 0;
  virtual std::string text(int column) const = 0;
  virtual int64_t int64(int column) const = 0;  // a boolean column reads as 0 or 1
  virtual bool is_null(int column) const = 0;
  virtual int changes() const = 0;
};

class Statement {
 public:
  Statement() = default;
  explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

  // Binds by 1-based index. A failed bind is reported by the next step().
  // A parameter never bound is NULL.
  Statement& bind(int index, std::string_view text) { impl_->bind_text(index, text); return *this; }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, int64_t value) { impl_->bind_int64(index, value); return *this; }
  Statement& bind_null(int index) { impl_->bind_null(index); return *this; }

  // true: a row is available; false: done.
  Result<bool> step() { return impl_->step(); }
  // Steps to completion, for statements that return no rows.
  Status run();
  // Resets for another execution and clears the bindings.
  void reset() { impl_->reset(); }

  std::string text(int column) const { return impl_->text(column); }
  int64_t int64(int column) const { return impl_->int64(column); }
  bool is_null(int column) const { return impl_->is_null(column); }

  // Rows changed by this statement's last completed INSERT/UPDATE/DELETE.
  int changes() const { return impl_->changes(); }

 private:
  std::unique_ptr<StatementImpl> impl_;
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

// One connection to the store's database.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  // Runs constant SQL without parameters (schema, transaction control). Never pass values here.
  virtual Status exec(const char* sql) = 0;
  virtual Result<Statement> prepare(std::string_view sql) = 0;
  // Inside a transaction (also one that failed and awaits its ROLLBACK).
  virtual bool in_transaction() const = 0;
  // How much work the engine did for the statements run so far (SQLite: its
  // virtual machine's steps, which grow with the rows a query visits; 0 where
  // the engine does not say). Tests use it to find queries that scan.
  virtual uint64_t vm_steps() const { return 0; }
};

// A write transaction on construction (SQLite: BEGIN IMMEDIATE, which takes
// the write lock up front, so a transaction never fails half-way to upgrade
// it; PostgreSQL: BEGIN, read committed, rows locked as they are written);
// ROLLBACK on destruction unless commit() succeeded. begin_read() gives one
// consistent snapshot for several reads without blocking writers (SQLite:
// BEGIN DEFERRED; PostgreSQL: REPEATABLE READ).
class Transaction {
 public:
  static Result<Transaction> begin(Connection& db);
  static Result<Transaction> begin_read(Connection& db);
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Connection* db) : db_(db) {}
  Connection* db_ = nullptr;
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

  explicit StatementCache(Connection* db) : db_(db) {}
  Result<Lease> get(const char* sql);

 private:
  Connection* db_;
  std::unordered_map<const char*, std::pair<Statement, bool /* leased */>> entries_;
};

}  // namespace airlock::store
