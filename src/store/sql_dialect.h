// Pure: what the PostgreSQL backend changes in SQL that is written once for
// both backends (docs/store.md "PostgreSQL").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace airlock::store {

// A statement with SQLite's ?N placeholders turned into PostgreSQL's $N.
struct PostgresText {
  std::string text;
  // referenced[i]: $(i+1) appears in the text; size() is the highest N.
  std::vector<bool> referenced;
};

// Turns every ?N outside quotes ('...', "...") and comments into $N. A bare
// `?` or ?0 is a bug in the store's constant SQL: it crashes.
PostgresText postgres_placeholders(std::string_view sql);

// The schema text, written in SQLite's terms, for PostgreSQL: INTEGER becomes
// BIGINT (SQLite's INTEGER is 64-bit), INTEGER PRIMARY KEY AUTOINCREMENT an
// identity column, TEXT compares bytewise (COLLATE "C", as SQLite's BINARY),
// and the STRICT table option goes (PostgreSQL is always strict). Quotes and
// comments are left as they are.
std::string postgres_ddl(std::string_view sqlite_ddl);

// Whether a failure with this SQLSTATE may pass when tried again: the
// connection's classes (08: connection exception; 57P01-57P03: the server is
// shutting down, crashed or starting up; 53300: too many connections) and a
// transaction the server rolled back (40001 serialization, 40P01 deadlock).
bool is_transient_sqlstate(std::string_view state);

}  // namespace airlock::store
