// The PostgreSQL backend of the store's connection interface (store/sql.h),
// over libpq. libpq is loaded with dlopen when a store first connects to
// PostgreSQL, so `airlock run` (a new process per job) and SQLite stores never
// load it and its two dozen shared libraries; only its header is needed to
// build (libpq-dev). Each statement is prepared on the server once per
// connection (PQprepare) and run with PQexecPrepared, values as parameters
// ($N, typed text or int8), never spliced into the SQL.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "store/sql.h"

namespace airlock::store {

// A database_url names PostgreSQL: "postgresql://..." or "postgres://...".
bool is_postgres_url(const std::string& url);

// Connects (libpq's URI syntax: postgresql://user[:password]@host:port/db?...).
// Errors never repeat the URL (it may hold a password).
Result<std::unique_ptr<Connection>> open_postgres(const std::string& url);

}  // namespace airlock::store
