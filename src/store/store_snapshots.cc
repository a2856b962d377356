// Store: workspace snapshots (rows, their contents, removal and expiry). The
// bytes are captured and restored by workspace/snapshot_tree.h through
// contents(); here only rows, chain records and unreferenced files.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <set>

#include "jobs/record.h"
#include "store/chain.h"
#include "store/store.h"
#include "store/sync.h"
#include "workspace/snapshot_manifest.h"

namespace airlock::store {

namespace {

SnapshotRow read_snapshot(const Statement& s) {
  return SnapshotRow{s.text(0),
                     s.text(1),
                     s.text(2),
                     static_cast<uint64_t>(s.int64(3)),
                     static_cast<uint64_t>(s.int64(4)),
                     s.text(5),
                     s.text(6),
                     s.text(7)};
}

bool printable_text(const std::string& text, size_t max) {
  if (text.size() > max) return false;
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

Result<std::pair<SnapshotRow, bool>> Store::add_snapshot(const SnapshotRow& in, uint64_t quota_bytes) {
  auto manifest = workspace::SnapshotManifest::from_json(in.manifest_json);
  if (!manifest) return fail("snapshot manifest: " + manifest.error().what);
  SnapshotRow row = in;
  row.manifest_json = manifest->to_json();
  row.digest = manifest->digest();
  if (!in.digest.empty() && in.digest != row.digest)
    return fail("snapshot digest '" + in.digest + "' does not match its manifest (" + row.digest +
                ")");
  row.size_bytes = manifest->total_bytes();
  row.entries = manifest->entries().size();
  if (row.tenant_id.empty()) return fail("a snapshot needs a tenant");
  if (!printable_text(row.source, 200)) return fail("snapshot source has control characters or is too long");
  if (row.created_at.empty()) row.created_at = jobs::now_rfc3339();
  const std::vector<std::string> contents = manifest->contents();

  // capture_tree fsynced each content's bytes, not the links that name them:
  // the directories that hold them are synced before the rows that name them
  // commit (at most 256 and sha256/; a syncfs would flush every other writer's
  // dirty data on the filesystem too). A missing content is reported below.
  std::set<std::string> dirs;
  for (const auto& sha : contents)
    if (std::string p = cas_.path(sha); !p.empty()) dirs.insert(p.substr(0, p.find_last_of('/')));
  dirs.insert(cas_.root() + "/sha256");
  for (const auto& d : dirs)
    if (auto st = sync_dir(d); !st && st.error().err != ENOENT) return std::unexpected(st.error());
  std::lock_guard lock(mu_);
  auto tx = Transaction::begin(*db_);
  if (!tx) return std::unexpected(tx.error());
  if (auto existing = snapshot_locked(row.tenant_id, row.digest); !existing) {
    return std::unexpected(existing.error());
  } else if (*existing) {
    return std::pair{**existing, false};
  }
  if (quota_bytes != UINT64_MAX) {
    auto used = storage_usage_locked(row.tenant_id);
    if (!used) return std::unexpected(used.error());
    if (row.size_bytes > quota_bytes || used->total() > quota_bytes - row.size_bytes)
      return fail_with("storage quota: the tenant keeps " + std::to_string(used->total()) + " of its " +
                           std::to_string(quota_bytes) + " bytes, and this snapshot's files hold " +
                           std::to_string(row.size_bytes),
                       EDQUOT);
  }
  // Removals unlink files under this mutex: what is here now stays until a
  // removal sees the rows committed below.
  for (const auto& sha : contents) {
    struct stat st{};
    if (::lstat(cas_.path(sha).c_str(), &st) < 0 || !S_ISREG(st.st_mode))
      return fail("snapshot content " + sha + " is not stored (removed while the snapshot was "
                  "taken?); take the snapshot again");
  }
  {
    auto s = sql(
        "INSERT INTO snapshots (tenant_id, digest, manifest_json, size_bytes, entries, source, "
        "created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.tenant_id)
        .bind(2, row.digest)
        .bind(3, row.manifest_json)
        .bind(4, static_cast<int64_t>(row.size_bytes))
        .bind(5, static_cast<int64_t>(row.entries))
        .bind(6, row.source)
        .bind(7, row.created_at)
        .bind(8, row.expires_at);
    if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
  }
  for (const auto& sha : contents) {
    auto s = sql("INSERT INTO snapshot_files (tenant_id, digest, sha256) VALUES (?1, ?2, ?3)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.tenant_id).bind(2, row.digest).bind(3, sha);
    if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
  }
  if (auto st = tx->commit(); !st) return std::unexpected(st.error());
  return std::pair{row, true};
}

Result<std::optional<SnapshotRow>> Store::snapshot_locked(const std::string& tenant_id,
                                                          const std::string& digest) {
  auto s = sql(
      "SELECT tenant_id, digest, manifest_json, size_bytes, entries, source, created_at, "
      "expires_at FROM snapshots WHERE tenant_id = ?1 AND digest = ?2");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, digest);
  return first_row<SnapshotRow>(**s, read_snapshot);
}

Result<std::optional<SnapshotRow>> Store::snapshot(const std::string& tenant_id,
                                                   const std::string& digest) {
  std::lock_guard lock(mu_);
  return snapshot_locked(tenant_id, digest);
}

Result<std::vector<SnapshotRow>> Store::snapshots(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT tenant_id, digest, manifest_json, size_bytes, entries, source, created_at, "
      "expires_at FROM snapshots WHERE tenant_id = ?1 ORDER BY created_at DESC, digest");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  return collect_rows<SnapshotRow>(**s, read_snapshot);
}

Result<std::vector<SnapshotRow>> Store::snapshots_of_every_tenant() {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT tenant_id, digest, manifest_json, size_bytes, entries, source, created_at, "
      "expires_at FROM snapshots ORDER BY created_at DESC, tenant_id, digest");
  if (!s) return std::unexpected(s.error());
  return collect_rows<SnapshotRow>(**s, read_snapshot);
}

Result<std::vector<SnapshotRow>> Store::snapshots_with_digest(const std::string& digest) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT tenant_id, digest, manifest_json, size_bytes, entries, source, created_at, "
      "expires_at FROM snapshots WHERE digest = ?1 ORDER BY created_at, tenant_id");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, digest);
  return collect_rows<SnapshotRow>(**s, read_snapshot);
}

Status Store::remove_snapshot_locked(const SnapshotRow& row, const std::string& reason,
                                     const std::string& now, std::set<std::string>& released) {
  std::vector<std::string> contents;
  {
    auto s = sql("SELECT sha256 FROM snapshot_files WHERE tenant_id = ?1 AND digest = ?2");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.tenant_id).bind(2, row.digest);
    auto visited = each_row(**s, [&](const Statement& r) { contents.push_back(r.text(0)); });
    if (!visited) return visited;
  }
  for (const char* text : {"DELETE FROM snapshot_files WHERE tenant_id = ?1 AND digest = ?2",
                           "DELETE FROM snapshots WHERE tenant_id = ?1 AND digest = ?2"}) {
    auto s = sql(text);
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.tenant_id).bind(2, row.digest);
    if (auto st = (*s)->run(); !st) return st;
  }
  uint64_t unreferenced = 0;
  for (const auto& sha : contents) {
    auto s = sql(
        "SELECT EXISTS (SELECT 1 FROM snapshot_files WHERE sha256 = ?1) OR "
        "EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, sha);
    auto r = (*s)->step();
    if (!r) return std::unexpected(r.error());
    if (*r && (*s)->int64(0) == 0 && !unclaimed_artifacts_.contains(sha)) {
      released.insert(sha);
      ++unreferenced;
    }
  }
  StoredRecord record;
  record.tenant_id = row.tenant_id;
  record.json = snapshot_removal_record_json(row, reason, unreferenced);
  record.created_at = now.empty() ? jobs::now_rfc3339() : now;
  return append_record_locked(record);
}

void Store::remove_unreferenced_locked(const std::set<std::string>& released) {
  for (const auto& sha : released) {
    if (unclaimed_artifacts_.contains(sha)) continue;
    auto s = sql(
        "SELECT EXISTS (SELECT 1 FROM snapshot_files WHERE sha256 = ?1) OR "
        "EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)");
    if (!s) continue;  // the file stays: harmless
    (*s)->bind(1, sha);
    auto r = (*s)->step();
    if (r && *r && (*s)->int64(0) == 0) (void)cas_.remove(sha);
  }
}

void Store::release_contents(const std::vector<std::string>& sha256s) {
  std::lock_guard lock(mu_);
  remove_unreferenced_locked({sha256s.begin(), sha256s.end()});
}

void Store::release_artifacts(const std::vector<std::string>& sha256s) {
  std::lock_guard lock(mu_);
  for (const auto& sha : sha256s)
    if (auto it = unclaimed_artifacts_.find(sha); it != unclaimed_artifacts_.end()) unclaimed_artifacts_.erase(it);
  remove_unreferenced_locked({sha256s.begin(), sha256s.end()});
}

Result<StorageUsage> Store::storage_usage(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  return storage_usage_locked(tenant_id);
}

Result<StorageUsage> Store::storage_usage_locked(const std::string& tenant_id) {
  auto s = sql(
      "SELECT (SELECT COALESCE(SUM(a.size), 0) FROM artifacts a JOIN jobs j ON j.id = a.job_id "
      "WHERE j.tenant_id = ?1), "
      "(SELECT COALESCE(SUM(size_bytes), 0) FROM snapshots WHERE tenant_id = ?1), "
      "(SELECT COALESCE(SUM(size), 0) FROM files WHERE tenant_id = ?1)");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  auto r = (*s)->step();
  if (!r) return std::unexpected(r.error());
  if (!*r) return fail("storage usage: no row");
  return StorageUsage{static_cast<uint64_t>((*s)->int64(0)), static_cast<uint64_t>((*s)->int64(1)),
                      static_cast<uint64_t>((*s)->int64(2))};
}

Result<bool> Store::delete_snapshot(const std::string& tenant_id, const std::string& digest,
                                    const std::string& now) {
  std::lock_guard lock(mu_);
  std::set<std::string> released;
  {
    auto tx = Transaction::begin(*db_);
    if (!tx) return std::unexpected(tx.error());
    auto row = snapshot_locked(tenant_id, digest);
    if (!row) return std::unexpected(row.error());
    if (!*row) return false;
    if (auto st = remove_snapshot_locked(**row, "deleted", now, released); !st)
      return std::unexpected(st.error());
    if (auto st = tx->commit(); !st) return std::unexpected(st.error());
  }
  remove_unreferenced_locked(released);
  return true;
}

Result<uint64_t> Store::expire_snapshots(const std::string& now) {
  if (now.empty()) return fail("expiry needs a time");
  std::lock_guard lock(mu_);
  std::set<std::string> released;
  uint64_t removed = 0;
  {
    auto tx = Transaction::begin(*db_);
    if (!tx) return std::unexpected(tx.error());
    std::vector<SnapshotRow> expired;
    {
      auto s = sql(
          "SELECT tenant_id, digest, manifest_json, size_bytes, entries, source, created_at, "
          "expires_at FROM snapshots WHERE expires_at <> '' AND expires_at <= ?1 "
          "ORDER BY tenant_id, expires_at, digest");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, now);
      auto rows = collect_rows<SnapshotRow>(**s, read_snapshot);
      if (!rows) return std::unexpected(rows.error());
      expired = std::move(*rows);
    }
    for (const auto& row : expired) {
      if (auto st = remove_snapshot_locked(row, "expired", now, released); !st)
        return std::unexpected(st.error());
      ++removed;
    }
    if (auto st = tx->commit(); !st) return std::unexpected(st.error());
  }
  remove_unreferenced_locked(released);
  return removed;
}

}  // namespace airlock::store
