// The store's schema, one for both backends, versioned with PRAGMA
// user_version (SQLite) or the table airlock_schema (PostgreSQL). migrate()
// applies every step above the database's version, each in its own
// transaction, and refuses a database written by a newer airlock.
#pragma once

#include "base/result.h"
#include "store/sql.h"

namespace airlock::store {

inline constexpr int kSchemaVersion = 4;

Result<int> schema_version(Connection& db);
Status migrate(Connection& db);

}  // namespace airlock::store
