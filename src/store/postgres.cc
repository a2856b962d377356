#include "store/postgres.h"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "base/check.h"
#include "store/libpq.h"
#include "store/sql_dialect.h"

namespace airlock::store {

namespace {

constexpr Oid kText = 25;  // pg_type oids
constexpr Oid kInt8 = 20;

struct ResultDeleter {
  const LibPq* pq;
  void operator()(PGresult* r) const { pq->clear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

std::string trimmed(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// A failed result as an Error: "what: <server message> (SQLSTATE xxxxx)". A
// full disk (53100) carries ENOSPC, as SQLite's SQLITE_FULL does. A lost
// connection, a server shutting down or starting up, or a transaction the
// server gave up on is kUnavailable (store_unavailable(): the same call may
// pass later); everything else kInternal.
std::unexpected<Error> result_fail(const LibPq& pq, PGconn* conn, PGresult* r, const std::string& what) {
  const char* state = r ? pq.result_error_field(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = trimmed(r ? pq.result_error_message(r) : pq.error_message(conn));
  if (message.empty()) message = trimmed(pq.error_message(conn));
  std::string text = what + ": " + message;
  if (state) text += std::string(" (SQLSTATE ") + state + ")";
  auto e = fail_with(text, state && std::strcmp(state, "53100") == 0 ? ENOSPC : 0);
  if (pq.status(conn) == CONNECTION_BAD || is_transient_sqlstate(state ? state : ""))
    e.error().kind = ErrorKind::kUnavailable;
  return e;
}

// What the statements of one connection share: the names of the server-side
// prepared statements, which a reconnect forgets (a new generation).
struct PgSession {
  uint64_t generation = 0;
  uint64_t next_name = 0;
};

class PgStatement final : public StatementImpl {
 public:
  PgStatement(const LibPq& pq, PGconn* conn, PgSession* session, std::string_view sql)
      : pq_(pq), conn_(conn), session_(session), sql_(postgres_placeholders(sql)),
        result_(nullptr, ResultDeleter{&pq}) {
    values_.resize(sql_.referenced.size());
    types_.resize(sql_.referenced.size(), 0);
    clear_bindings();
  }

  void bind_text(int index, std::string_view text) override {
    size_t i = slot(index);
    // libpq passes text parameters as C strings: a NUL would cut the value short.
    if (text.find('\0') != std::string_view::npos && bind_error_.empty())
      bind_error_ = "a text value holds a NUL byte";
    values_[i] = std::string(text);
    types_[i] = kText;
  }
  void bind_int64(int index, int64_t value) override {
    size_t i = slot(index);
    values_[i] = std::to_string(value);
    types_[i] = kInt8;
  }
  void bind_null(int index) override {
    size_t i = slot(index);
    values_[i].reset();
    types_[i] = sql_.referenced[i] ? 0 : kText;  // 0: the server infers it from its use
  }

  Result<bool> step() override {
    if (!executed_) {
      if (!bind_error_.empty()) return fail("bind a parameter: " + bind_error_);
      std::vector<const char*> values(values_.size());
      for (size_t i = 0; i < values_.size(); ++i) values[i] = values_[i] ? values_[i]->c_str() : nullptr;
      auto name = prepared_name();
      if (!name) return std::unexpected(name.error());
      result_.reset(pq_.exec_prepared(conn_, name->c_str(), static_cast<int>(values.size()), values.data(),
                                      nullptr, nullptr, 0));
      executed_ = true;
      ExecStatusType st = result_ ? pq_.result_status(result_.get()) : PGRES_FATAL_ERROR;
      if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        auto e = result_fail(pq_, conn_, result_.get(), "sql: " + sql_.text);
        result_.reset();
        return e;
      }
      rows_ = pq_.ntuples(result_.get());
      const char* tuples = pq_.cmd_tuples(result_.get());
      changes_ = tuples && *tuples ? std::atoi(tuples) : 0;
      row_ = -1;
    }
    if (!result_) return false;
    return ++row_ < rows_;
  }

  void reset() override {
    result_.reset();
    executed_ = false;
    rows_ = 0;
    row_ = -1;
    clear_bindings();
  }

  std::string text(int column) const override {
    const char* v = value(column);
    return std::string(v, static_cast<size_t>(pq_.getlength(result_.get(), row_, column)));
  }
  int64_t int64(int column) const override {
    const char* v = value(column);
    if (std::strcmp(v, "t") == 0) return 1;  // booleans come as t / f
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v, v + std::strlen(v), n);
    if (ec == std::errc() && *end == '\0') return n;
    return static_cast<int64_t>(std::strtod(v, nullptr));  // numeric sums with a fraction; NULL and f read 0
  }
  bool is_null(int column) const override {
    AIRLOCK_CHECK(result_ && row_ >= 0 && row_ < rows_);
    return pq_.getisnull(result_.get(), row_, column) == 1;
  }
  int changes() const override { return changes_; }

 private:
  // The server-side statement for this text and these parameter types (a NULL
  // is untyped, so its type set differs): prepared once, then parsed and
  // planned by the server no more.
  Result<std::string> prepared_name() {
    if (generation_ != session_->generation) {
      names_.clear();
      generation_ = session_->generation;
    }
    std::string key(reinterpret_cast<const char*>(types_.data()), types_.size() * sizeof(Oid));
    if (auto it = names_.find(key); it != names_.end()) return it->second;
    std::string name = "airlock_" + std::to_string(++session_->next_name);
    ResultPtr r(pq_.prepare(conn_, name.c_str(), sql_.text.c_str(), static_cast<int>(types_.size()),
                            types_.data()),
                ResultDeleter{&pq_});
    if (!r || pq_.result_status(r.get()) != PGRES_COMMAND_OK)
      return result_fail(pq_, conn_, r.get(), "prepare " + sql_.text);
    names_.emplace(std::move(key), name);
    return name;
  }

  size_t slot(int index) {
    AIRLOCK_CHECK(index >= 1 && static_cast<size_t>(index) <= values_.size());  // as SQLITE_RANGE
    return static_cast<size_t>(index - 1);
  }
  const char* value(int column) const {
    AIRLOCK_CHECK(result_ && row_ >= 0 && row_ < rows_);
    return pq_.getvalue(result_.get(), row_, column);
  }
  // A parameter never bound is NULL, as in SQLite.
  void clear_bindings() {
    for (size_t i = 0; i < values_.size(); ++i) bind_null(static_cast<int>(i + 1));
    bind_error_.clear();
  }

  const LibPq& pq_;
  PGconn* conn_;
  PgSession* session_;
  uint64_t generation_ = 0;
  std::map<std::string, std::string> names_;  // parameter types -> prepared statement
  PostgresText sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<Oid> types_;
  std::string bind_error_;
  ResultPtr result_;
  bool executed_ = false;
  int rows_ = 0, row_ = -1, changes_ = 0;
};

void ignore_notice(void*, const char*) {}  // "NOTICE: relation exists, skipping" and the like

class PgConnection final : public Connection {
 public:
  PgConnection(const LibPq& pq, PGconn* conn) : pq_(pq), conn_(conn) {}
  ~PgConnection() override { pq_.finish(conn_); }

  Dialect dialect() const override { return Dialect::kPostgres; }

  Status exec(const char* sql) override {
    const bool begins = std::strncmp(sql, "BEGIN", 5) == 0;
    const bool ends = std::strcmp(sql, "COMMIT") == 0 || std::strcmp(sql, "ROLLBACK") == 0;
    reconnect_if_lost();
    if (ends) open_transaction_ = false;  // whatever its answer: the next BEGIN may reconnect
    ResultPtr r(pq_.exec(conn_, sql), ResultDeleter{&pq_});
    if (begins && r && pq_.result_status(r.get()) == PGRES_COMMAND_OK) open_transaction_ = true;
    ExecStatusType st = r ? pq_.result_status(r.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_EMPTY_QUERY) return {};  // a migration step with nothing for this backend
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      return result_fail(pq_, conn_, r.get(), std::string("sql: ") + sql);
    // COMMIT of a transaction that failed answers "ROLLBACK", not an error.
    if (std::strcmp(sql, "COMMIT") == 0 && std::strcmp(pq_.cmd_status(r.get()), "ROLLBACK") == 0)
      return fail("sql: COMMIT: the transaction had failed and was rolled back");
    return {};
  }

  Result<Statement> prepare(std::string_view sql) override {
    reconnect_if_lost();  // a read outside a transaction after a restart of the server
    return Statement(std::make_unique<PgStatement>(pq_, conn_, &session_, sql));
  }

  bool in_transaction() const override {
    auto st = pq_.transaction_status(conn_);
    return st == PQTRANS_INTRANS || st == PQTRANS_INERROR || st == PQTRANS_ACTIVE;
  }

 private:
  // A server restart or a dropped connection: connect again, but only between
  // transactions (one cut short has failed its callers already). Inside one,
  // every statement fails until its COMMIT or ROLLBACK: a reconnect there
  // would run the rest of it outside any transaction.
  void reconnect_if_lost() {
    if (open_transaction_ || pq_.status(conn_) != CONNECTION_BAD) return;
    pq_.reset(conn_);
    ++session_.generation;  // the new server session has no prepared statements
  }

  const LibPq& pq_;
  PGconn* conn_;
  PgSession session_;
  bool open_transaction_ = false;  // between a BEGIN that passed and its COMMIT or ROLLBACK
};

}  // namespace

bool is_postgres_url(const std::string& url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

Result<std::unique_ptr<Connection>> open_postgres(const std::string& url) {
  if (!is_postgres_url(url)) return fail(ErrorKind::kInvalid, "a database_url starts with postgresql://");
  auto pq = libpq();
  if (!pq) return std::unexpected(pq.error());
  PGconn* conn = (*pq)->connectdb(url.c_str());
  if (!conn) return fail("connect to PostgreSQL: out of memory");
  if ((*pq)->status(conn) != CONNECTION_OK) {
    std::string why = trimmed((*pq)->error_message(conn));
    (*pq)->finish(conn);
    return fail(ErrorKind::kUnavailable, "connect to PostgreSQL: " + why);
  }
  (*pq)->set_notice_processor(conn, ignore_notice, nullptr);
  auto db = std::make_unique<PgConnection>(**pq, conn);
  // Text in and out is UTF-8; times are the store's own RFC 3339 text.
  if (auto st = db->exec("SET client_encoding = 'UTF8'"); !st) return std::unexpected(st.error());
  return std::unique_ptr<Connection>(std::move(db));
}

}  // namespace airlock::store
