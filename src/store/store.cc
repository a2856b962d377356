// Store: opening, tenants, API keys, uploaded files, artifact bytes and
// publications. Jobs and records are in store_jobs.cc; usage, retention and
// verification in store_maintenance.cc.
#include "store/store.h"

#include "base/strings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/unique_fd.h"
#include "jobs/record.h"
#include "store/postgres.h"
#include "store/schema.h"
#include "store/secrets.h"
#include "store/sqlite.h"
#include "store/sync.h"
#include "sys/file_io.h"

namespace airlock::store {

namespace {

const std::set<std::string> kScopes = {"admin", "publish", "read", "run"};

bool valid_tenant_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.'))
      return false;
  return true;
}

bool printable(const std::string& text, size_t max) {
  if (text.size() > max) return false;
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

std::string join_scopes(const std::set<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::set<std::string> split_scopes(const std::string& text) {
  std::set<std::string> out;
  for (auto& part : split(text, ','))
    if (!part.empty()) out.insert(std::move(part));
  return out;
}

Tenant read_tenant(const Statement& s) {
  Tenant t;
  t.id = s.text(0);
  t.name = s.text(1);
  t.limits.max_running = static_cast<int>(s.int64(2));
  t.limits.max_queued = static_cast<int>(s.int64(3));
  t.limits.max_memory_bytes = static_cast<uint64_t>(s.int64(4));
  t.limits.max_timeout_ms = static_cast<uint64_t>(s.int64(5));
  t.limits.max_cpu_time_ms = static_cast<uint64_t>(s.int64(6));
  t.limits.max_pids = static_cast<int>(s.int64(7));
  t.created_at = s.text(8);
  return t;
}

// id, tenant_id, name, scopes, created_at, revoked_at
ApiKey read_key(const Statement& s) {
  ApiKey k;
  k.id = s.text(0);
  k.tenant_id = s.text(1);
  k.name = s.text(2);
  k.scopes = split_scopes(s.text(3));
  k.created_at = s.text(4);
  k.revoked = !s.is_null(5);
  return k;
}

Status make_private_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) < 0) {
    if (errno != EEXIST) return fail_errno("create " + path);
  }
  struct stat st{};
  if (::lstat(path.c_str(), &st) < 0) return fail_errno("stat " + path);
  if (!S_ISDIR(st.st_mode)) return fail(path + " is not a directory");
  return {};
}

}  // namespace

Status check_scopes(const std::set<std::string>& scopes) {
  if (scopes.empty()) return fail("a key needs at least one scope");
  for (const auto& scope : scopes)
    if (!kScopes.contains(scope))
      return fail("unknown scope '" + scope + "' (known: run, read, publish, admin)");
  return {};
}

// --- opening -----------------------------------------------------------------

std::string default_data_dir() {
  const char* env = std::getenv("AIRLOCK_DATA_DIR");
  return env && *env ? env : "/var/lib/airlock/service";
}

namespace {

// <data_dir>/airlock.db, in WAL mode with synchronous = FULL.
Result<std::unique_ptr<Connection>> open_sqlite_store(const std::string& data_dir) {
  // Created here first so that the database (and SQLite's -wal and -shm files,
  // which copy its mode) are private whatever the umask.
  std::string db_path = data_dir + "/airlock.db";
  UniqueFd fd(::open(db_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return fail_errno("create " + db_path);
  fd.reset();

  auto db = Database::open(db_path);
  if (!db) return std::unexpected(db.error());
  sqlite3_busy_timeout(db->get(), 5000);
  // WAL: readers never block the writer. FULL: every commit fsyncs the WAL
  // before it returns, so what a response reported survives a power loss too;
  // the group commit shares that fsync among the writes of a batch
  // (docs/store.md "Durability").
  for (const char* pragma :
       {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON"})
    if (auto st = db->exec(pragma); !st) return std::unexpected(st.error());
  {
    auto mode = db->prepare("PRAGMA journal_mode");
    if (!mode) return std::unexpected(mode.error());
    auto row = mode->step();
    if (!row) return std::unexpected(row.error());
    if (!*row || mode->text(0) != "wal")
      return fail("cannot put " + db_path + " in WAL mode (journal_mode is " +
                  (*row ? mode->text(0) : std::string("unknown")) + ")");
  }
  return std::unique_ptr<Connection>(std::make_unique<Database>(std::move(*db)));
}

}  // namespace

Store::Store(std::string data_dir, std::unique_ptr<Connection> db, StoreOptions options)
    : data_dir_(std::move(data_dir)),
      cas_((options.content_dir.empty() ? data_dir_ : options.content_dir) + "/artifacts"),
      db_(std::move(db)),
      commits_(options.max_batch, [this](const std::vector<CommitQueue::Write*>& batch) { commit_batch(batch); }) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& data_dir, StoreOptions options) {
  if (data_dir.empty()) return fail("the data directory is empty");
  std::string parent = data_dir.substr(0, data_dir.find_last_of('/'));
  if (!parent.empty() && parent != data_dir)
    if (auto st = sys::make_dirs(parent, 0755); !st) return std::unexpected(st.error());
  if (auto st = make_private_dir(data_dir); !st) return std::unexpected(st.error());
  if (!options.content_dir.empty())
    if (auto st = sys::make_dirs(options.content_dir, 0755); !st) return std::unexpected(st.error());
  ContentStore cas((options.content_dir.empty() ? data_dir : options.content_dir) + "/artifacts");
  if (auto st = cas.create_dirs(); !st) return std::unexpected(st.error());

  auto db = options.database_url.empty() ? open_sqlite_store(data_dir) : open_postgres(options.database_url);
  if (!db) return std::unexpected(db.error());
  if (auto st = migrate(**db); !st) return std::unexpected(st.error());
  return std::unique_ptr<Store>(new Store(data_dir, std::move(*db), options));
}

// --- tenants -----------------------------------------------------------------

Result<Tenant> Store::create_tenant(const std::string& name, const TenantLimits& limits) {
  if (!valid_tenant_name(name))
    return fail("tenant name '" + name + "' is not 1 to 64 of [A-Za-z0-9._-]");
  if (limits.max_running < 1 || limits.max_queued < 0 || limits.max_pids < 1 ||
      limits.max_memory_bytes == 0 || limits.max_timeout_ms == 0 || limits.max_cpu_time_ms == 0 ||
      limits.max_memory_bytes > INT64_MAX || limits.max_timeout_ms > INT64_MAX ||
      limits.max_cpu_time_ms > INT64_MAX)
    return fail("tenant limits out of range");
  auto id = random_hex(8);
  if (!id) return std::unexpected(id.error());
  Tenant t{*id, name, limits, jobs::now_rfc3339()};

  std::lock_guard lock(mu_);
  auto tx = Transaction::begin(*db_);
  if (!tx) return std::unexpected(tx.error());
  {
    auto s = sql("SELECT 1 FROM tenants WHERE name = ?1");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, name);
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (*row) return fail("tenant '" + name + "' already exists");
  }
  auto s = sql(
      "INSERT INTO tenants (id, name, max_running, max_queued, max_memory_bytes, max_timeout_ms, "
      "max_cpu_time_ms, max_pids, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, t.id)
      .bind(2, t.name)
      .bind(3, int64_t{limits.max_running})
      .bind(4, int64_t{limits.max_queued})
      .bind(5, static_cast<int64_t>(limits.max_memory_bytes))
      .bind(6, static_cast<int64_t>(limits.max_timeout_ms))
      .bind(7, static_cast<int64_t>(limits.max_cpu_time_ms))
      .bind(8, int64_t{limits.max_pids})
      .bind(9, t.created_at);
  if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
  if (auto st = tx->commit(); !st) return std::unexpected(st.error());
  return t;
}

Result<std::optional<Tenant>> Store::tenant_locked(const char* text, const std::string& value) {
  auto s = sql(text);
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, value);
  return first_row<Tenant>(**s, read_tenant);
}

Result<std::optional<Tenant>> Store::tenant(const std::string& id) {
  std::lock_guard lock(mu_);
  return tenant_locked(
      "SELECT id, name, max_running, max_queued, max_memory_bytes, max_timeout_ms, "
      "max_cpu_time_ms, max_pids, created_at FROM tenants WHERE id = ?1",
      id);
}

Result<std::optional<Tenant>> Store::tenant_by_name(const std::string& name) {
  std::lock_guard lock(mu_);
  return tenant_locked(
      "SELECT id, name, max_running, max_queued, max_memory_bytes, max_timeout_ms, "
      "max_cpu_time_ms, max_pids, created_at FROM tenants WHERE name = ?1",
      name);
}

Result<std::vector<Tenant>> Store::tenants() {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT id, name, max_running, max_queued, max_memory_bytes, max_timeout_ms, "
      "max_cpu_time_ms, max_pids, created_at FROM tenants ORDER BY name");
  if (!s) return std::unexpected(s.error());
  return collect_rows<Tenant>(**s, read_tenant);
}

// --- API keys ----------------------------------------------------------------

Result<std::pair<ApiKey, std::string>> Store::create_key(const std::string& tenant_id,
                                                         const std::string& name,
                                                         const std::set<std::string>& scopes) {
  if (auto st = check_scopes(scopes); !st) return std::unexpected(st.error());
  if (!printable(name, 200)) return fail("key name has control characters or is too long");
  auto id = random_hex(8);
  if (!id) return std::unexpected(id.error());
  auto secret = new_key_secret();
  if (!secret) return std::unexpected(secret.error());
  ApiKey key{*id, tenant_id, name, scopes, jobs::now_rfc3339(), false};

  std::lock_guard lock(mu_);
  auto tx = Transaction::begin(*db_);
  if (!tx) return std::unexpected(tx.error());
  {
    auto s = sql("SELECT 1 FROM tenants WHERE id = ?1");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, tenant_id);
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return fail("no tenant with id '" + tenant_id + "'");
  }
  auto s = sql(
      "INSERT INTO api_keys (id, tenant_id, name, secret_sha256, scopes, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, key.id)
      .bind(2, key.tenant_id)
      .bind(3, key.name)
      .bind(4, key_secret_hash(*secret))
      .bind(5, join_scopes(scopes))
      .bind(6, key.created_at);
  if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
  if (auto st = tx->commit(); !st) return std::unexpected(st.error());
  return std::pair{key, *secret};
}

Result<std::optional<ApiKey>> Store::authenticate(const std::string& secret) {
  // Looked up by the hash of the secret: the index walk leaks at most timing
  // about a sha256 of the guess, which tells nothing about any stored secret.
  // The final comparison is constant-time anyway.
  if (secret.size() > 256) return std::optional<ApiKey>();
  std::string hash = key_secret_hash(secret);
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT id, tenant_id, name, scopes, created_at, revoked_at, secret_sha256 FROM api_keys "
      "WHERE secret_sha256 = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, hash);
  auto row = (*s)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row || !constant_time_equal((*s)->text(6), hash)) return std::optional<ApiKey>();
  ApiKey key = read_key(**s);
  if (key.revoked) return std::optional<ApiKey>();
  return std::optional<ApiKey>(std::move(key));
}

Result<std::vector<ApiKey>> Store::keys(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT id, tenant_id, name, scopes, created_at, revoked_at FROM api_keys "
      "WHERE ?1 = '' OR tenant_id = ?1 ORDER BY created_at, id");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  return collect_rows<ApiKey>(**s, read_key);
}

Result<std::optional<ApiKey>> Store::key(const std::string& key_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT id, tenant_id, name, scopes, created_at, revoked_at FROM api_keys WHERE id = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, key_id);
  auto row = (*s)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<ApiKey>();
  return std::optional<ApiKey>(read_key(**s));
}

Status Store::revoke_key(const std::string& key_id) {
  std::lock_guard lock(mu_);
  auto s = sql("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, key_id).bind(2, jobs::now_rfc3339());
  if (auto st = (*s)->run(); !st) return st;
  if ((*s)->changes() == 1) return {};
  auto check = sql("SELECT 1 FROM api_keys WHERE id = ?1");
  if (!check) return std::unexpected(check.error());
  (*check)->bind(1, key_id);
  auto row = (*check)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return fail("no key with id '" + key_id + "'");
  return {};  // already revoked
}

// --- uploaded files ----------------------------------------------------------

Result<FileRow> Store::add_file(const FileRow& in) {
  FileRow row = in;
  if (row.tenant_id.empty() || row.path.empty()) return fail("a file needs a tenant and a path");
  if (!is_sha256_hex(row.sha256)) return fail("file sha256 '" + row.sha256 + "' is not valid");
  if (row.size > INT64_MAX) return fail("file size out of range");
  if (row.id.empty()) {
    auto id = random_hex(8);
    if (!id) return std::unexpected(id.error());
    row.id = *id;
  }
  if (row.created_at.empty()) row.created_at = jobs::now_rfc3339();
  // The bytes and their name reach the disk before the row that names them;
  // the service puts each upload in a directory of its own (files/<id>/), so
  // that directory's entry is synced as well.
  if (auto st = sync_file_and_dirs(row.path, 2); !st) return std::unexpected(st.error());
  auto st = write([&]() -> Status {
    auto s = sql(
        "INSERT INTO files (id, tenant_id, name, size, sha256, path, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.id)
        .bind(2, row.tenant_id)
        .bind(3, row.name)
        .bind(4, static_cast<int64_t>(row.size))
        .bind(5, row.sha256)
        .bind(6, row.path)
        .bind(7, row.created_at);
    return (*s)->run();
  });
  if (!st) return std::unexpected(st.error());
  return row;
}

Result<std::optional<FileRow>> Store::file(const std::string& tenant_id, const std::string& id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT id, tenant_id, name, size, sha256, path, created_at FROM files "
      "WHERE tenant_id = ?1 AND id = ?2");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, id);
  auto row = (*s)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::optional<FileRow>();
  const Statement& r = **s;
  return std::optional<FileRow>(FileRow{r.text(0), r.text(1), r.text(2),
                                        static_cast<uint64_t>(r.int64(3)), r.text(4), r.text(5),
                                        r.text(6)});
}

// --- artifact bytes and publication ------------------------------------------

Result<std::string> Store::put_artifact(const std::string& path,
                                        const std::string& expected_sha256) {
  auto put = cas_.put(path, expected_sha256);  // copies, hashes and syncs outside the lock
  if (!put) return std::unexpected(put.error());
  // put() fsynced the bytes; the link into sha256/<2 hex>/ (and that
  // directory, when it is new) must reach the disk before a row names it.
  auto durable = [&] { return sync_dir(put->path.substr(0, put->path.find_last_of('/'))); };
  if (auto st = durable(); !st) return std::unexpected(st.error());
  if (auto st = sync_dir(cas_.root() + "/sha256"); !st) return std::unexpected(st.error());
  std::lock_guard lock(mu_);
  // Retention may have removed the file between link() and here: store again.
  if (::access(put->path.c_str(), F_OK) < 0) {
    put = cas_.put(path, expected_sha256);
    if (!put) return std::unexpected(put.error());
    if (auto st = durable(); !st) return std::unexpected(st.error());
  }
  unclaimed_artifacts_.insert(expected_sha256);
  return put->path;
}

std::string Store::artifact_path(const std::string& sha256) const { return cas_.path(sha256); }

Status Store::publish(const std::string& job_id, const std::string& name,
                      const std::string& key_id, const std::string& at) {
  std::string when = at.empty() ? jobs::now_rfc3339() : at;
  return write([&]() -> Status {
    {
      auto s = sql(
          "SELECT j.state FROM jobs j JOIN artifacts a ON a.job_id = j.id "
          "WHERE j.id = ?1 AND a.name = ?2");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, job_id).bind(2, name);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) return fail("job '" + job_id + "' has no artifact '" + name + "'");
      if ((*s)->text(0) != "finished") return fail("job '" + job_id + "' has not finished");
    }
    auto s = sql("INSERT INTO publications (job_id, name, key_id, at) VALUES (?1, ?2, ?3, ?4)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, job_id).bind(2, name).bind(3, key_id).bind(4, when);
    return (*s)->run();
  });
}

Result<std::vector<std::pair<std::string, std::string>>> Store::publications(
    const std::string& job_id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT name, key_id, at FROM publications WHERE job_id = ?1 ORDER BY n");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, job_id);
  return collect_rows<std::pair<std::string, std::string>>(
      **s, [](const Statement& r) { return std::make_pair(r.text(0), r.text(1) + "@" + r.text(2)); });
}

}  // namespace airlock::store
