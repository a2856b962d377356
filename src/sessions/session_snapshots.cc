// SessionService: snapshots of a session's /workspace (docs/snapshots.md).
// Taking one walks the live tree on the task pool and stores its files by
// content; the tenant owns the snapshot until it is deleted or expires.
#include <cerrno>

#include "jobs/record.h"
#include "sessions/session_service.h"
#include "service/tenant_param.h"
#include "workspace/snapshot_tree.h"

namespace airlock::service {
namespace {

using json = nlohmann::json;

json snapshot_view(const store::SnapshotRow& row) {
  return {{"digest", row.digest},     {"tenant", row.tenant_id},      {"size_bytes", row.size_bytes}, {"entries", row.entries},
          {"source", row.source},     {"created_at", row.created_at}, {"expires_at", row.expires_at}};
}

}  // namespace

void SessionService::snapshot(const Caller& c, const std::string& id, Reply reply) {
  auto s = open_session(c, id, Access::kChange);
  if (!s) return reply(std::unexpected(s.error()));
  std::string tenant = c.tenant.id, tenant_name = c.tenant.name;
  tasks_.post([this, session = *s, tenant, tenant_name, reply] {
    auto ws = open_workspace(*session);
    if (!ws) return reply(std::unexpected(ws.error()));
    workspace::CaptureLimits limits;
    limits.max_bytes = config_.snapshot_max_bytes;
    // Contents this capture stored new; unless a new snapshot row references
    // them, they go again, so a refused capture costs no disk.
    std::vector<std::string> created;
    auto captured = workspace::capture_tree(ws->root.get(), store_.contents(), limits, created);
    if (!captured) {
      store_.release_contents(created);
      bool limit = captured.error().err == 0;  // over a limit or a bad tree, not airlock's own failure
      return reply(api_error(limit ? 422 : 500, limit ? "snapshot_refused" : "internal",
                             "snapshot: " + captured.error().message()));
    }
    store::SnapshotRow row;
    row.tenant_id = tenant;
    row.manifest_json = captured->manifest.to_json();
    row.source = session->row().id;
    auto now = std::chrono::system_clock::now();
    row.created_at = jobs::rfc3339(now);
    row.expires_at = jobs::rfc3339(now + std::chrono::seconds(config_.snapshot_ttl_s));
    auto added = store_.add_snapshot(row, tenant_storage_bytes(config_, tenant_name));
    if (!added || !added->second) store_.release_contents(created);
    if (!added) {
      if (added.error().err == EDQUOT)
        return reply(api_error(422, "snapshot_refused",
                               "snapshot: " + added.error().what + " (tenant_storage_mb; see GET /v1/usage)"));
      return reply(store_failure(added.error()));
    }
    json skipped = json::array();
    for (const auto& e : captured->skipped) skipped.push_back({{"path", e.path}, {"reason", e.reason}});
    session->note({{"event", "snapshot"}, {"digest", added->first.digest}, {"skipped", skipped.size()}});
    json v = snapshot_view(added->first);
    v["skipped"] = skipped;
    v["new"] = added->second;
    reply(v);
  });
}

ApiResult<json> SessionService::snapshots(const Caller& c, const std::map<std::string, std::string>& q) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  auto parsed = parse_tenant_only_query(q, {c.can("admin"), c.tenant.id, c.tenant.name});
  if (!parsed) return std::unexpected(parsed.error());
  auto tenant_id = jobs_.tenant_asked(c, *parsed);
  if (!tenant_id) return std::unexpected(tenant_id.error());
  auto rows = *tenant_id == "*" ? store_.snapshots_of_every_tenant() : store_.snapshots(*tenant_id);
  if (!rows) return store_failure(rows.error());
  auto names = jobs_.tenant_names(c, *tenant_id);
  json out = json::array();
  for (const auto& row : *rows) {
    json v = snapshot_view(row);
    auto name = names.find(row.tenant_id);
    v["tenant_name"] = name == names.end() ? json(nullptr) : json(name->second);
    out.push_back(std::move(v));
  }
  return json{{"snapshots", out}, {"scope", *tenant_id == "*" ? "all_tenants" : "tenant"}};
}

ApiResult<json> SessionService::snapshot_info(const Caller& c, const std::string& digest,
                                              const std::map<std::string, std::string>& q) {
  if (auto no = c.lacks({"read", "run", "admin"})) return std::unexpected(*no);
  auto parsed = parse_tenant_only_query(q, {c.can("admin"), c.tenant.id, c.tenant.name});
  if (!parsed) return std::unexpected(parsed.error());
  auto tenant_id = jobs_.tenant_asked(c, *parsed);
  if (!tenant_id) return std::unexpected(tenant_id.error());
  // Tenants may hold the same digest: the one asked for, else the caller's
  // own, else (an admin key only) the first tenant's that has it.
  std::optional<store::SnapshotRow> found;
  if (*tenant_id != "*") {
    auto row = store_.snapshot(*tenant_id, digest);
    if (!row) return store_failure(row.error());
    found = *row;
  }
  // Named (its own tenant too): only that tenant's.
  if (!found && c.can("admin") && (!q.contains("tenant") || *tenant_id == "*")) {
    auto rows = store_.snapshots_with_digest(digest);
    if (!rows) return store_failure(rows.error());
    if (!rows->empty()) found = rows->front();
  }
  if (!found) return not_found("snapshot " + digest);
  const store::SnapshotRow* row = &*found;
  json v = snapshot_view(*row);
  auto manifest = workspace::SnapshotManifest::from_json(row->manifest_json);
  if (manifest) {
    json files = json::array();
    for (const auto& e : manifest->entries())
      files.push_back({{"path", e.path}, {"kind", std::string(workspace::to_string(e.kind))}, {"size", e.size},
                       {"sha256", e.sha256}});
    v["files"] = files;
  }
  return v;
}

ApiResult<json> SessionService::delete_snapshot(const Caller& c, const std::string& digest) {
  if (auto no = c.lacks({"run"})) return std::unexpected(*no);
  auto removed = store_.delete_snapshot(c.tenant.id, digest);
  if (!removed) return store_failure(removed.error());
  if (!*removed) return not_found("snapshot " + digest);
  return json{{"digest", digest}, {"deleted", true}};
}

ApiResult<json> SessionService::expire_snapshots() {
  auto removed = store_.expire_snapshots(jobs::now_rfc3339());
  if (!removed) return store_failure(removed.error());
  return json{{"removed", *removed}};
}

}  // namespace airlock::service
