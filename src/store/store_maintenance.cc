// Store: usage, retention and verification of the record chains.
#include <sys/stat.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "jobs/record.h"
#include "store/chain.h"
#include "store/retention_proof.h"
#include "store/store.h"

namespace airlock::store {

namespace {

uint64_t usage_field(const nlohmann::json& usage, const char* name) {
  auto it = usage.find(name);
  if (it == usage.end() || !it->is_number()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, it->get<int64_t>()));
  double d = it->get<double>();
  return d > 0 ? static_cast<uint64_t>(d) : 0;
}

}  // namespace

Result<Usage> Store::usage(const std::string& tenant_id, const std::string& from,
                           const std::string& to) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT j.outcome, r.json FROM jobs j LEFT JOIN records r ON r.job_id = j.id "
      "WHERE j.tenant_id = ?1 AND j.state = 'finished' "
      "AND (?2 = '' OR j.finished_at >= ?2) AND (?3 = '' OR j.finished_at < ?3)");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, from).bind(3, to);
  Usage u;
  while (true) {
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return u;
    ++u.jobs;
    ++u.by_outcome[(*s)->text(0)];
    auto record = parse_json_or_discarded((*s)->text(1), kMaxStoredJsonDepth);
    if (!record.is_object()) continue;
    auto it = record.find("usage");
    if (it == record.end() || !it->is_object()) continue;
    u.cpu_ms += usage_field(*it, "cpu_ms");
    u.wall_ms += usage_field(*it, "wall_ms");
    u.peak_memory_bytes = std::max(u.peak_memory_bytes, usage_field(*it, "peak_memory_bytes"));
  }
}

Result<uint64_t> Store::remove_older_than(const std::string& before, const std::string& now,
                                          const RetentionPolicy& policy) {
  if (before.empty()) return fail("retention needs a time");
  std::lock_guard lock(mu_);
  auto tx = Transaction::begin(*db_);
  if (!tx) return std::unexpected(tx.error());

  std::vector<ChainHead> heads;
  std::vector<std::string> tenants;
  {
    auto s = sql("SELECT tenant_id, seq, hash FROM chain_heads ORDER BY tenant_id");
    if (!s) return std::unexpected(s.error());
    auto visited = each_row(**s, [&](const Statement& r) {
      tenants.push_back(r.text(0));
      heads.push_back(ChainHead{r.int64(1), r.text(2)});
    });
    if (!visited) return std::unexpected(visited.error());
  }

  uint64_t removed = 0;
  std::set<std::string> released;  // artifact contents whose rows were removed
  for (size_t t = 0; t < tenants.size(); ++t) {
    const std::string& tenant = tenants[t];
    // The prefix to remove ends before the first record that is not old
    // enough: the chain stays one unbroken run after the retention record.
    int64_t through = heads[t].seq;
    {
      auto s = sql("SELECT min(seq) FROM records WHERE tenant_id = ?1 AND created_at >= ?2");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, tenant).bind(2, before);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (*row && !(*s)->is_null(0)) through = (*s)->int64(0) - 1;
    }
    std::string last_hash;
    {
      auto s = sql(
          "SELECT seq, hash FROM records WHERE tenant_id = ?1 AND seq <= ?2 "
          "ORDER BY seq DESC LIMIT 1");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, tenant).bind(2, through);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) continue;  // nothing old enough
      through = (*s)->int64(0);
      last_hash = (*s)->text(1);
    }
    std::vector<std::string> jobs;
    bool other_records = false;  // snapshot removal records (job_id '', not retention)
    std::string newest_removed;  // the latest created_at among the records removed
    {
      auto s = sql(
          "SELECT job_id, json, created_at FROM records WHERE tenant_id = ?1 AND seq <= ?2 "
          "ORDER BY seq");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, tenant).bind(2, through);
      auto visited = each_row(**s, [&](const Statement& r) {
        if (!r.text(0).empty())
          jobs.push_back(r.text(0));
        else if (!parse_retention_record(r.text(1)))
          other_records = true;
        newest_removed = std::max(newest_removed, r.text(2));  // one format: text order is time order
      });
      if (!visited) return std::unexpected(visited.error());
    }
    // Only an earlier retention record is old: removing it alone would just
    // replace it with another one at every run.
    if (jobs.empty() && !other_records) continue;

    for (const auto& job : jobs) {
      {
        auto s = sql("SELECT sha256 FROM artifacts WHERE job_id = ?1");
        if (!s) return std::unexpected(s.error());
        (*s)->bind(1, job);
        auto visited = each_row(**s, [&](const Statement& r) {
          released.insert(r.text(0));
        });
        if (!visited) return std::unexpected(visited.error());
      }
      for (const char* text : {"DELETE FROM publications WHERE job_id = ?1",
                               "DELETE FROM data_request_answers WHERE job_id = ?1",
                               "DELETE FROM artifacts WHERE job_id = ?1",
                               "DELETE FROM jobs WHERE id = ?1"}) {
        auto s = sql(text);
        if (!s) return std::unexpected(s.error());
        (*s)->bind(1, job);
        if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
      }
    }
    {
      auto s = sql("DELETE FROM records WHERE tenant_id = ?1 AND seq <= ?2");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, tenant).bind(2, through);
      if (auto st = (*s)->run(); !st) return std::unexpected(st.error());
    }
    StoredRecord record;
    record.tenant_id = tenant;
    record.created_at = now.empty() ? jobs::now_rfc3339() : now;
    RetentionClaim claim;
    claim.removed_jobs = jobs;
    claim.removed_through_seq = through;
    claim.last_removed_hash = last_hash;
    claim.removed_through_time = newest_removed;
    claim.retention_days = policy.retention_days;
    claim.at = record.created_at;
    auto text = retention_record_text(tenant, std::move(claim), policy.signing_key);
    if (!text) return std::unexpected(text.error());
    record.json = std::move(*text);
    if (auto st = append_record_locked(record); !st) return std::unexpected(st.error());
    removed += jobs.size();
  }
  if (auto st = tx->commit(); !st) return std::unexpected(st.error());

  // Files go after the commit, and only those no artifact or snapshot row
  // references and no put_artifact() is about to name (all checked under the
  // mutex that put_artifact() and add_snapshot() take).
  remove_unreferenced_locked(released);
  return removed;
}

Result<VerifyReport> Store::verify() {
  VerifyReport report;
  std::lock_guard lock(mu_);
  // One snapshot for the whole walk; writers of other processes go on.
  auto tx = Transaction::begin_read(*db_);
  if (!tx) return std::unexpected(tx.error());

  std::vector<std::string> tenants;
  {
    auto s = sql(
        "SELECT tenant_id FROM chain_heads UNION SELECT DISTINCT tenant_id FROM records "
        "ORDER BY 1");
    if (!s) return std::unexpected(s.error());
    auto visited = each_row(**s, [&](const Statement& r) {
      tenants.push_back(r.text(0));
    });
    if (!visited) return std::unexpected(visited.error());
  }

  // Steps through one tenant's records selected by `query`, oldest first.
  auto each_record = [&](const char* query, const std::string& tenant,
                         const std::function<void(StoredRecord)>& visit) -> Status {
    auto s = sql(query);
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, tenant);
    return each_row(**s, [&](const Statement& r) {
      visit(StoredRecord{r.text(0), r.text(1), r.int64(2), r.text(3), r.text(4), r.text(5), r.text(6)});
    });
  };
  for (const auto& tenant : tenants) {
    ChainVerifier chain(tenant);
    if (auto st = each_record("SELECT job_id, tenant_id, seq, prev_hash, hash, json, created_at FROM records "
                              "WHERE tenant_id = ?1 AND job_id = '' ORDER BY seq",
                              tenant, [&](StoredRecord r) { chain.note_retention(r); });
        !st)
      return std::unexpected(st.error());
    if (auto st = each_record("SELECT job_id, tenant_id, seq, prev_hash, hash, json, created_at FROM records "
                              "WHERE tenant_id = ?1 ORDER BY seq",
                              tenant, [&](StoredRecord r) { chain.add(r); });
        !st)
      return std::unexpected(st.error());
    std::optional<ChainHead> head;
    {
      auto s = sql("SELECT seq, hash FROM chain_heads WHERE tenant_id = ?1");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, tenant);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (*row) head = ChainHead{(*s)->int64(0), (*s)->text(1)};
    }
    chain.finish(head);
    report.records += chain.records();
    report.problems.insert(report.problems.end(), chain.problems().begin(),
                           chain.problems().end());
  }

  // A finished job always has a record (finish_job writes both at once).
  {
    auto s = sql(
        "SELECT j.tenant_id, j.id FROM jobs j WHERE j.state = 'finished' AND NOT EXISTS "
        "(SELECT 1 FROM records r WHERE r.job_id = j.id) ORDER BY j.n");
    if (!s) return std::unexpected(s.error());
    auto visited = each_row(**s, [&](const Statement& r) {
      report.problems.push_back("tenant " + r.text(0) + ": job " + r.text(1) +
                                " finished but its record is missing");
    });
    if (!visited) return std::unexpected(visited.error());
  }
  // A content is stored when its file is there (its bytes are not re-hashed here).
  auto stored = [this](const std::string& sha256) {
    std::string path = cas_.path(sha256);
    struct stat st{};
    return !path.empty() && ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  // Every artifact row has its bytes.
  {
    auto s = sql("SELECT job_id, name, sha256 FROM artifacts ORDER BY job_id, name");
    if (!s) return std::unexpected(s.error());
    auto visited = each_row(**s, [&](const Statement& r) {
      if (!stored(r.text(2)))
        report.problems.push_back("job " + r.text(0) + ": artifact " + r.text(1) +
                                  " (sha256 " + r.text(2) + ") is missing");
    });
    if (!visited) return std::unexpected(visited.error());
  }
  // Every content a snapshot names is stored.
  {
    auto s = sql("SELECT tenant_id, digest, sha256 FROM snapshot_files ORDER BY 1, 2, 3");
    if (!s) return std::unexpected(s.error());
    auto visited = each_row(**s, [&](const Statement& r) {
      if (!stored(r.text(2)))
        report.problems.push_back("tenant " + r.text(0) + ": snapshot " + r.text(1) +
                                  " content " + r.text(2) + " is missing");
    });
    if (!visited) return std::unexpected(visited.error());
  }
  report.ok = report.problems.empty();
  return report;
}

}  // namespace airlock::store
