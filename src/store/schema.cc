#include "store/schema.h"

#include <array>
#include <string>

#include "store/sql_dialect.h"

namespace airlock::store {

namespace {

// Step i takes the schema from version i to i + 1. Never edit a released step:
// add one. Each is written once, in SQLite's terms (postgres_ddl() translates
// the types for PostgreSQL), plus what only one backend can say (triggers).
struct Migration {
  const char* both;
  const char* sqlite_only = "";
  const char* postgres_only = "";
};

constexpr std::array<Migration, kSchemaVersion> kMigrations = {{
    // 0 -> 1: the first schema.
    {R"sql(
CREATE TABLE tenants (
  id               TEXT PRIMARY KEY,
  name             TEXT NOT NULL UNIQUE,
  max_running      INTEGER NOT NULL,
  max_queued       INTEGER NOT NULL,
  max_memory_bytes INTEGER NOT NULL,
  max_timeout_ms   INTEGER NOT NULL,
  max_cpu_time_ms  INTEGER NOT NULL,
  max_pids         INTEGER NOT NULL,
  created_at       TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  name          TEXT NOT NULL,
  secret_sha256 TEXT NOT NULL UNIQUE,  -- the secret itself is never stored
  scopes        TEXT NOT NULL,         -- sorted, comma-separated
  created_at    TEXT NOT NULL,
  revoked_at    TEXT                   -- NULL while the key is valid
) STRICT;
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE TABLE files (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id),
  name       TEXT NOT NULL,
  size       INTEGER NOT NULL,
  sha256     TEXT NOT NULL,
  path       TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX files_tenant ON files(tenant_id);

CREATE TABLE jobs (
  n               INTEGER PRIMARY KEY AUTOINCREMENT,  -- insertion order, never reused
  id              TEXT NOT NULL UNIQUE,
  tenant_id       TEXT NOT NULL REFERENCES tenants(id),
  key_id          TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('queued', 'running', 'finished')),
  request_json    TEXT NOT NULL,
  idempotency_key TEXT NOT NULL DEFAULT '',
  created_at      TEXT NOT NULL,
  started_at      TEXT NOT NULL DEFAULT '',
  finished_at     TEXT NOT NULL DEFAULT '',
  outcome         TEXT NOT NULL DEFAULT '',
  pid             INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX jobs_idempotency ON jobs(tenant_id, idempotency_key)
  WHERE idempotency_key <> '';
CREATE INDEX jobs_tenant_created ON jobs(tenant_id, created_at, n);
CREATE INDEX jobs_tenant_finished ON jobs(tenant_id, finished_at) WHERE state = 'finished';
CREATE INDEX jobs_unfinished ON jobs(state) WHERE state <> 'finished';

-- One hash chain per tenant. Retention records have job_id ''.
CREATE TABLE records (
  tenant_id  TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  job_id     TEXT NOT NULL,
  prev_hash  TEXT NOT NULL,
  hash       TEXT NOT NULL,
  json       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, seq)
) STRICT;
CREATE UNIQUE INDEX records_job ON records(job_id) WHERE job_id <> '';

-- The last link of each chain, so that a removed tail is noticed.
CREATE TABLE chain_heads (
  tenant_id TEXT PRIMARY KEY,
  seq       INTEGER NOT NULL,
  hash      TEXT NOT NULL
) STRICT;

CREATE TABLE artifacts (
  job_id TEXT NOT NULL REFERENCES jobs(id),
  name   TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  type   TEXT NOT NULL,
  size   INTEGER NOT NULL,
  PRIMARY KEY (job_id, name)
) STRICT;
CREATE INDEX artifacts_sha256 ON artifacts(sha256);

CREATE TABLE publications (
  n      INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL REFERENCES jobs(id),
  name   TEXT NOT NULL,
  key_id TEXT NOT NULL,
  at     TEXT NOT NULL
) STRICT;
CREATE INDEX publications_job ON publications(job_id);
)sql",
     R"sql(
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
BEGIN
  SELECT RAISE(ABORT, 'records are append-only');
END;
)sql",
     R"sql(
CREATE FUNCTION airlock_records_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'records are append-only';
END $$;
CREATE TRIGGER records_append_only BEFORE UPDATE ON records
  FOR EACH ROW EXECUTE FUNCTION airlock_records_append_only();
-- SQLite's json_valid + json_extract in one: the text as jsonb, NULL when it
-- is not JSON, so that one odd row cannot fail a query.
CREATE FUNCTION airlock_json(t TEXT) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN t::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;
)sql"},
    // 1 -> 2: sessions, their calls, and workspace snapshots.
    {R"sql(
-- A session's record goes into its tenant's chain (records.job_id = session id)
-- when it closes; its calls are kept here as they end.
CREATE TABLE sessions (
  n            INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  key_id       TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('open', 'closed')),
  request_json TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  closed_at    TEXT NOT NULL DEFAULT '',
  close_reason TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX sessions_tenant_created ON sessions(tenant_id, created_at, n);
CREATE INDEX sessions_open ON sessions(state) WHERE state = 'open';

CREATE TABLE session_calls (
  session_id  TEXT NOT NULL REFERENCES sessions(id),
  seq         INTEGER NOT NULL,
  id          TEXT NOT NULL,
  call_json   TEXT NOT NULL,  -- kind, code, status, times, usage, result (capped)
  PRIMARY KEY (session_id, seq)
) STRICT;
CREATE UNIQUE INDEX session_calls_id ON session_calls(id);

-- A snapshot belongs to a tenant; the same content taken by two tenants is
-- two rows sharing the stored files.
CREATE TABLE snapshots (
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  digest        TEXT NOT NULL,
  manifest_json TEXT NOT NULL,
  size_bytes    INTEGER NOT NULL,
  entries       INTEGER NOT NULL,
  source        TEXT NOT NULL,  -- the session it was taken from
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL,  -- '' = never
  PRIMARY KEY (tenant_id, digest)
) STRICT;
CREATE INDEX snapshots_expiry ON snapshots(expires_at) WHERE expires_at <> '';

-- Which stored contents (artifacts/sha256/...) each snapshot references, so
-- that removing a snapshot or an artifact keeps contents still in use.
CREATE TABLE snapshot_files (
  tenant_id TEXT NOT NULL,
  digest    TEXT NOT NULL,
  sha256    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, digest, sha256)
) STRICT;
CREATE INDEX snapshot_files_sha256 ON snapshot_files(sha256);
)sql"},
    // 2 -> 3: the application's answers to jobs' data requests
    // (docs/data-requests.md); each is also a chained record.
    {R"sql(
CREATE TABLE data_request_answers (
  job_id     TEXT NOT NULL REFERENCES jobs(id),
  request_id TEXT NOT NULL,
  tenant_id  TEXT NOT NULL,
  state      TEXT NOT NULL CHECK (state IN ('answered', 'refused')),
  by_job     TEXT NOT NULL DEFAULT '',
  reason     TEXT NOT NULL DEFAULT '',
  key_id     TEXT NOT NULL,
  at         TEXT NOT NULL,
  PRIMARY KEY (job_id, request_id)
) STRICT;
)sql"},
    // 3 -> 4: the store as the cluster's queue (docs/store.md "Queue and
    // nodes"): who claimed each job, the nodes and their heartbeats.
    {R"sql(
ALTER TABLE jobs ADD COLUMN node_id TEXT NOT NULL DEFAULT '';  -- claimed by ('' = nobody)
ALTER TABLE jobs ADD COLUMN claimed_at TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN image TEXT NOT NULL DEFAULT '';    -- accepted image ref, for placement
ALTER TABLE sessions ADD COLUMN node_id TEXT NOT NULL DEFAULT '';  -- the worker that keeps it
-- The claimable jobs, oldest first; and each node's jobs.
CREATE INDEX jobs_claimable ON jobs(created_at, n) WHERE state = 'queued' AND node_id = '';
CREATE INDEX jobs_node ON jobs(node_id) WHERE node_id <> '' AND state <> 'finished';
CREATE INDEX sessions_node ON sessions(node_id) WHERE state = 'open';
CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  role          TEXT NOT NULL,
  address       TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('up', 'draining', 'lost', 'left')),
  slots         INTEGER NOT NULL,
  running       INTEGER NOT NULL DEFAULT 0,
  session_slots INTEGER NOT NULL DEFAULT 0,
  sessions      INTEGER NOT NULL DEFAULT 0,
  warm_images   TEXT NOT NULL DEFAULT '',  -- comma-separated image names with warm or preloaded sandboxes
  started_at    TEXT NOT NULL,
  heartbeat_at  TEXT NOT NULL,
  lost_at       TEXT NOT NULL DEFAULT ''
) STRICT;
)sql"},
}};

// PRAGMA user_version takes no bound parameter; the values are our own constants.
constexpr std::array<const char*, kSchemaVersion + 1> kSetVersion = {
    "PRAGMA user_version = 0", "PRAGMA user_version = 1", "PRAGMA user_version = 2",
    "PRAGMA user_version = 3", "PRAGMA user_version = 4"};

// PostgreSQL keeps the version in a table of one row. Two nodes that migrate
// one database at once wait for each other on this advisory lock (a constant:
// "airlock schema" as a number), taken inside the migration's transaction.
constexpr const char* kPgLockSchema = "SELECT pg_advisory_xact_lock(7236510289871224353)";
constexpr const char* kPgVersionTable = "CREATE TABLE IF NOT EXISTS airlock_schema (version BIGINT NOT NULL)";

Status apply_step(Connection& db, const Migration& step) {
  if (db.dialect() == Dialect::kSqlite) {
    AIRLOCK_TRY(db.exec(step.both));
    return db.exec(step.sqlite_only);
  }
  AIRLOCK_TRY(db.exec(postgres_ddl(step.both).c_str()));
  return db.exec(step.postgres_only);
}

Status set_version(Connection& db, int version) {
  if (db.dialect() == Dialect::kSqlite) return db.exec(kSetVersion[version]);
  AIRLOCK_TRY(db.exec("DELETE FROM airlock_schema"));
  auto s = db.prepare("INSERT INTO airlock_schema (version) VALUES (?1)");
  if (!s) return std::unexpected(s.error());
  s->bind(1, int64_t{version});
  return s->run();
}

}  // namespace

Result<int> schema_version(Connection& db) {
  const bool pg = db.dialect() == Dialect::kPostgres;
  auto stmt = db.prepare(pg ? "SELECT COALESCE((SELECT max(version) FROM airlock_schema), 0)"
                            : "PRAGMA user_version");
  if (!stmt) return std::unexpected(stmt.error());
  auto row = stmt->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail("the schema version query returned no row");
  return static_cast<int>(stmt->int64(0));
}

Status migrate(Connection& db) {
  while (true) {
    auto tx = Transaction::begin(db);
    if (!tx) return std::unexpected(tx.error());
    if (db.dialect() == Dialect::kPostgres) {
      AIRLOCK_TRY(db.exec(kPgLockSchema));
      AIRLOCK_TRY(db.exec(kPgVersionTable));
    }
    // Read inside the write transaction: two processes opening a new file at
    // once migrate it once.
    auto version = schema_version(db);
    if (!version) return std::unexpected(version.error());
    if (*version > kSchemaVersion)
      return fail("database schema version " + std::to_string(*version) +
                  " is newer than this airlock's (" + std::to_string(kSchemaVersion) + ")");
    if (*version == kSchemaVersion) return tx->commit();
    if (*version < 0) return fail("database schema version " + std::to_string(*version));
    if (auto st = apply_step(db, kMigrations[*version]); !st)
      return fail("migrate the store to version " + std::to_string(*version + 1) + ": " +
                  st.error().what);
    if (auto st = set_version(db, *version + 1); !st) return st;
    if (auto st = tx->commit(); !st) return st;
  }
}

}  // namespace airlock::store
