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

}  // namespace airlock::store
