// Store: the jobs table as the cluster's queue: claims, hand-backs, cancel
// requests and counts (docs/store.md "Queue and nodes").
#include <set>

#include "jobs/record.h"
#include "store/claim_rules.h"
#include "store/notifier.h"
#include "store/row_readers.h"
#include "store/store.h"
#include "usage/ledger.h"

namespace airlock::store {

namespace {

// Candidates looked at per claim. Those of a tenant at its max_running never
// come back; those left to a warm node wait at most prefer_warm_ms, so a
// claim that finds none of these 64 claimable finds one on a later try.
constexpr int64_t kCandidates = 64;

struct Candidate {
  std::string id, tenant_id, image, created_at;
};

}  // namespace

Result<std::optional<JobRow>> Store::claim_job(const ClaimOptions& o) {
  if (auto st = check_node_fields(o.node_id, o.warm_images); !st) return std::unexpected(st.error());
  std::string now = o.now.empty() ? jobs::now_rfc3339() : o.now;
  auto now_ms = usage::parse_time_ms(now);
  if (!now_ms) return fail(ErrorKind::kInvalid, "claim: '" + now + "' is not an RFC 3339 UTC time");
  const bool pg = db_->dialect() == Dialect::kPostgres;

  std::optional<JobRow> claimed;
  auto st = write([&]() -> Status {
    claimed.reset();
    // The claimant must be up: a draining, lost or left node takes nothing.
    {
      auto s = sql("SELECT state FROM nodes WHERE id = ?1");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, o.node_id);
      auto row = (*s)->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) return fail(ErrorKind::kRefused, "node '" + o.node_id + "' is not registered");
      if ((*s)->text(0) != "up") return fail(ErrorKind::kRefused, "node '" + o.node_id + "' is " + (*s)->text(0));
    }
    std::set<std::string> others;  // images warm on another up node with a free slot
    {
      auto s = sql("SELECT warm_images FROM nodes WHERE state = 'up' AND id <> ?1 AND running < slots AND warm_images <> ''");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, o.node_id);
      if (auto st = each_row(**s, [&](const Statement& r) {
            for (auto& image : split_images(r.text(0))) others.insert(std::move(image));
          });
          !st)
        return st;
    }
    // The queue in claim order: the tenant with the fewest running or claimed
    // jobs first (a tenant at its max_running not at all), then the oldest job.
    std::vector<Candidate> candidates;
    {
      auto s = sql(
          "WITH busy AS (SELECT tenant_id, count(*) AS n FROM jobs "
          "  WHERE state = 'running' OR (state = 'queued' AND node_id <> '') GROUP BY tenant_id) "
          "SELECT j.id, j.tenant_id, j.image, j.created_at FROM jobs j "
          "JOIN tenants t ON t.id = j.tenant_id LEFT JOIN busy b ON b.tenant_id = j.tenant_id "
          "WHERE j.state = 'queued' AND j.node_id = '' AND COALESCE(b.n, 0) < t.max_running "
          "ORDER BY COALESCE(b.n, 0), j.created_at, j.n LIMIT ?1");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, kCandidates);
      auto rows = collect_rows<Candidate>(**s, [](const Statement& r) {
        return Candidate{r.text(0), r.text(1), r.text(2), r.text(3)};
      });
      if (!rows) return std::unexpected(rows.error());
      candidates = std::move(*rows);
    }
    std::set<std::string> passed;  // tenants skipped: busy elsewhere or full
    for (const auto& c : candidates) {
      if (passed.contains(c.tenant_id)) continue;
      WarmCheck warm{c.image, usage::parse_time_ms(c.created_at).value_or(0), *now_ms, o.prefer_warm_ms,
                     &o.warm_images, &others};
      if (leave_to_warm_node(warm)) continue;
      if (pg) {
        // Two nodes claiming for one tenant at once would each count the other's
        // claim out and pass max_running together: a tenant's claims take its
        // claim lock (another key than its chain lock). Tried, never waited for
        // (a group commit may hold chain locks meanwhile): a tenant another node
        // is claiming for is passed, as SKIP LOCKED passes a row.
        auto lock = sql("SELECT pg_try_advisory_xact_lock(hashtextextended('airlock claim ' || ?1, 0))");
        if (!lock) return std::unexpected(lock.error());
        (*lock)->bind(1, c.tenant_id);
        auto row = (*lock)->step();
        if (!row) return std::unexpected(row.error());
        if (!*row || (*lock)->int64(0) != 1) {
          passed.insert(c.tenant_id);
          continue;
        }
        // Counted again under the lock: the candidates' count was read before it.
        auto count = sql(
            "SELECT count(*) < (SELECT max_running FROM tenants WHERE id = ?1) FROM jobs "
            "WHERE tenant_id = ?1 AND (state = 'running' OR (state = 'queued' AND node_id <> ''))");
        if (!count) return std::unexpected(count.error());
        (*count)->bind(1, c.tenant_id);
        auto below = (*count)->step();
        if (!below) return std::unexpected(below.error());
        if (!*below || (*count)->int64(0) != 1) {
          passed.insert(c.tenant_id);
          continue;
        }
      }
      // PostgreSQL: a row another transaction holds (a cancel, another
      // claimant) is passed, not waited for. SQLite holds the write lock.
      auto update = sql(pg ? "UPDATE jobs SET node_id = ?2, claimed_at = ?3 WHERE id = "
                             "(SELECT id FROM jobs WHERE id = ?1 AND state = 'queued' AND node_id = '' "
                             "FOR UPDATE SKIP LOCKED)"
                           : "UPDATE jobs SET node_id = ?2, claimed_at = ?3 "
                             "WHERE id = ?1 AND state = 'queued' AND node_id = ''");
      if (!update) return std::unexpected(update.error());
      (*update)->bind(1, c.id).bind(2, o.node_id).bind(3, now);
      if (auto st = (*update)->run(); !st) return st;
      if ((*update)->changes() != 1) continue;
      auto job = job_locked(c.id);
      if (!job) return std::unexpected(job.error());
      if (!*job) return fail("claimed job '" + c.id + "' vanished inside its transaction");
      claimed = std::move(*job);
      return {};
    }
    return {};
  });
  if (!st) return std::unexpected(st.error());
  return claimed;
}

Status Store::release_claim(const std::string& job_id, const std::string& node_id) {
  return write([&]() -> Status {
    auto s = sql(
        "UPDATE jobs SET node_id = '', claimed_at = '' "
        "WHERE id = ?1 AND node_id = ?2 AND node_id <> '' AND state = 'queued'");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, job_id).bind(2, node_id);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1)
      return fail(ErrorKind::kRefused, "job '" + job_id + "' is not claimed and unstarted by node '" + node_id + "'");
    return notify_locked(kChannelJobs, job_id);
  });
}

Result<bool> Store::request_cancel(const std::string& job_id) {
  bool to_worker = false;
  auto st = write([&]() -> Status {
    to_worker = false;
    // Set on every unfinished job, the unclaimed too: a node that claims it
    // before the caller has ended it sees the request in the claimed row and
    // ends it as cancelled without running it (one of the two finishes is refused).
    auto s = sql("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1 AND state <> 'finished'");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, job_id);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1) return {};
    // Read after the UPDATE took the row's lock: a claim committed before it is seen.
    auto job = job_locked(job_id);
    if (!job) return std::unexpected(job.error());
    if (!*job) return {};
    to_worker = !(*job)->node_id.empty() || (*job)->state == JobState::kRunning;
    if (!to_worker) return {};
    return notify_locked(kChannelCancel, job_id);
  });
  if (!st) return std::unexpected(st.error());
  return to_worker;
}

Result<QueueCounts> Store::queue_counts(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT count(*) FILTER (WHERE state = 'queued' AND node_id = ''), "
      "count(*) FILTER (WHERE state = 'queued' AND node_id <> ''), "
      "count(*) FILTER (WHERE state = 'running') "
      "FROM jobs WHERE (?1 = '' OR tenant_id = ?1) AND state <> 'finished'");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  auto row = (*s)->step();
  if (!row) return std::unexpected(row.error());
  QueueCounts c;
  if (!*row) return c;
  c.queued = static_cast<int>((*s)->int64(0));
  c.claimed = static_cast<int>((*s)->int64(1));
  c.running = static_cast<int>((*s)->int64(2));
  return c;
}

}  // namespace airlock::store
