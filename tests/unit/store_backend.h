// The store's tests run on both backends: TEST_P suites instantiated with
// AIRLOCK_STORE_BACKENDS(Suite). PostgreSQL runs on a real server, the ctest
// fixture's or the test process's own (tests/support/postgres_server.h), a fresh database per test;
// without the server binaries those cases are skipped, saying why.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "support/postgres_server.h"
#include "store/postgres.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace airlock::store::testing {

enum class Backend { kSqlite, kPostgres };

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "sqlite" : "postgres";
}

// The options that put a store on `backend`; `skip` is set when it cannot run here.
inline Result<StoreOptions> backend_options(Backend backend, std::string* skip) {
  StoreOptions options = StoreOptions::defaults();
  if (backend == Backend::kSqlite) return options;
  std::string why;
  auto* server = airlock::testing::shared_postgres(&why);
  if (!server) {
    *skip = "PostgreSQL backend not tested: " + why;
    return options;
  }
  auto url = server->create_database();
  if (!url) return std::unexpected(url.error());
  options.database_url = *url;
  return options;
}

// In a TEST_P suite: sets `options` for the suite's backend (a fresh
// PostgreSQL database) and opens `out` in `dir` with them; skips the test
// when the backend cannot run here.
#define AIRLOCK_OPEN_STORE_ON_BACKEND(dir, out, options)                                    \
  do {                                                                                      \
    std::string airlock_skip_;                                                              \
    auto airlock_options_ = ::airlock::store::testing::backend_options(GetParam(), &airlock_skip_); \
    if (!airlock_skip_.empty()) GTEST_SKIP() << airlock_skip_;                              \
    ASSERT_TRUE(airlock_options_) << airlock_options_.error().message();                    \
    (options) = *airlock_options_;                                                          \
    auto airlock_store_ = ::airlock::store::Store::open((dir), (options));                  \
    ASSERT_TRUE(airlock_store_) << airlock_store_.error().message();                        \
    (out) = std::move(*airlock_store_);                                                     \
  } while (0)

// A second, raw connection to the database a store with `options` in
// `data_dir` uses: for tests that read or change rows behind the store's back.
inline Result<std::unique_ptr<Connection>> raw_connection(const StoreOptions& options,
                                                          const std::string& data_dir) {
  if (!options.database_url.empty()) return open_postgres(options.database_url);
  auto db = Database::open(data_dir + "/airlock.db");
  if (!db) return std::unexpected(db.error());
  return std::unique_ptr<Connection>(std::make_unique<Database>(std::move(*db)));
}

#define AIRLOCK_STORE_BACKENDS(suite)                                                              \
  INSTANTIATE_TEST_SUITE_P(Backends, suite,                                                        \
                           ::testing::Values(::airlock::store::testing::Backend::kSqlite,          \
                                             ::airlock::store::testing::Backend::kPostgres),       \
                           ::airlock::store::testing::backend_name)

}  // namespace airlock::store::testing
