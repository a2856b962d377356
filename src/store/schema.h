// The store's schema, versioned with PRAGMA user_version. migrate() applies
// every step above the file's version, each in its own transaction, and
// refuses a file written by a newer airlock.
#pragma once

#include "base/result.h"
#include "store/sqlite.h"

namespace airlock::store {

inline constexpr int kSchemaVersion = 3;

Result<int> schema_version(Database& db);
Status migrate(Database& db);

}  // namespace airlock::store
