// Store: jobs, their records (the per-tenant chain) and artifact rows.
#include <nlohmann/json.hpp>

#include "jobs/record.h"
#include "store/chain.h"
#include "store/notifier.h"
#include "store/row_readers.h"
#include "store/secrets.h"
#include "store/store.h"

namespace airlock::store {

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kFinished:
      return "finished";
  }
  return "queued";
}

std::optional<JobState> parse_job_state(std::string_view text) {
  if (text == "queued") return JobState::kQueued;
  if (text == "running") return JobState::kRunning;
  if (text == "finished") return JobState::kFinished;
  return std::nullopt;
}

JobRow read_job_row(const Statement& s) {
  JobRow j;
  j.id = s.text(0);
  j.tenant_id = s.text(1);
  j.key_id = s.text(2);
  j.state = parse_job_state(s.text(3)).value_or(JobState::kQueued);  // CHECK constraint
  j.request_json = s.text(4);
  j.idempotency_key = s.text(5);
  j.created_at = s.text(6);
  j.started_at = s.text(7);
  j.finished_at = s.text(8);
  j.outcome = s.text(9);
  j.pid = static_cast<int>(s.int64(10));
  j.node_id = s.text(12);
  j.claimed_at = s.text(13);
  j.image = s.text(14);
  j.cancel_requested = s.int64(15) != 0;
  return j;
}

namespace {

// tenant_id, seq, job_id, prev_hash, hash, json, created_at
StoredRecord read_record(const Statement& s) {
  StoredRecord r;
  r.tenant_id = s.text(0);
  r.seq = s.int64(1);
  r.job_id = s.text(2);
  r.prev_hash = s.text(3);
  r.hash = s.text(4);
  r.json = s.text(5);
  r.created_at = s.text(6);
  return r;
}

// A page cursor: where the previous page ended, as (created_at, n).
std::string encode_cursor(const std::string& created_at, int64_t n) {
  return base64url_encode(created_at + "\n" + std::to_string(n));
}

std::optional<std::pair<std::string, int64_t>> decode_cursor(const std::string& cursor) {
  auto text = base64url_decode(cursor);
  if (!text) return std::nullopt;
  size_t nl = text->rfind('\n');
  if (nl == std::string::npos || nl + 1 == text->size() || text->size() - nl > 20)
    return std::nullopt;
  int64_t n = 0;
  for (size_t i = nl + 1; i < text->size(); ++i) {
    char c = (*text)[i];
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return std::pair{text->substr(0, nl), n};
}

}  // namespace

Result<std::pair<JobRow, bool>> Store::create_job(const JobRow& in,
                                                  const std::vector<DataRequestAnswer>& answers_in) {
  JobRow row = in;
  if (row.tenant_id.empty()) return fail("a job needs a tenant");
  if (row.id.empty()) {
    auto id = random_hex(8);
    if (!id) return std::unexpected(id.error());
    row.id = *id;
  }
  if (row.created_at.empty()) row.created_at = jobs::now_rfc3339();
  row.state = JobState::kQueued;
  row.started_at.clear();
  row.finished_at.clear();
  row.outcome.clear();
  row.pid = 0;
  row.node_id.clear();
  row.claimed_at.clear();
  row.cancel_requested = false;

  JobRow result;
  bool created = false;
  auto st = write([&]() -> Status {
    if (!row.idempotency_key.empty()) {
      // idempotency_key <> '': the partial index jobs_idempotency's condition (see Store::record).
      auto s = sql("SELECT " JOB_COLUMNS " FROM jobs WHERE tenant_id = ?1 AND idempotency_key = ?2 "
                   "AND idempotency_key <> ''");
      if (!s) return std::unexpected(s.error());
      (*s)->bind(1, row.tenant_id).bind(2, row.idempotency_key);
      auto found = (*s)->step();
      if (!found) return std::unexpected(found.error());
      if (*found) {
        result = read_job_row(**s);
        created = false;
        return {};
      }
    }
    auto s = sql(
        "INSERT INTO jobs (id, tenant_id, key_id, state, request_json, idempotency_key, created_at, image) "
        "VALUES (?1, ?2, ?3, 'queued', ?4, ?5, ?6, ?7)");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, row.id)
        .bind(2, row.tenant_id)
        .bind(3, row.key_id)
        .bind(4, row.request_json)
        .bind(5, row.idempotency_key)
        .bind(6, row.created_at)
        .bind(7, row.image);
    if (auto st = (*s)->run(); !st) return st;
    // A follow-up's answers with it: a request answered meanwhile leaves no job.
    std::vector<DataRequestAnswer> answers = answers_in;
    for (auto& a : answers) a.by_job = row.id;
    if (auto st = answer_data_requests_locked(answers); !st) return st;
    if (auto st = notify_locked(kChannelJobs, row.id); !st) return st;
    result = row;
    created = true;
    return {};
  });
  if (!st) return std::unexpected(st.error());
  return std::pair{result, created};
}

Status Store::mark_running(const std::string& job_id, int pid, const std::string& at,
                           const std::string& node_id) {
  std::string started = at.empty() ? jobs::now_rfc3339() : at;
  return write([&]() -> Status {
    // With a node: only the claimant may start it; one whose node was declared
    // lost (the claim was taken back) is refused, so it never runs twice.
    // The same start again (its first COMMIT's answer was lost with the
    // connection) changes nothing and passes.
    auto s = sql(
        "UPDATE jobs SET state = 'running', pid = ?2, started_at = ?3 "
        "WHERE id = ?1 AND (?4 = '' OR node_id = ?4) AND "
        "(state = 'queued' OR (state = 'running' AND pid = ?2 AND started_at = ?3))");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, job_id).bind(2, int64_t{pid}).bind(3, started).bind(4, node_id);
    if (auto st = (*s)->run(); !st) return st;
    if ((*s)->changes() != 1) {
      if (node_id.empty()) return fail("job '" + job_id + "' is not queued");
      return fail(ErrorKind::kRefused, "job '" + job_id + "' is not queued and claimed by node '" + node_id + "'");
    }
    return {};
  });
}

Result<std::optional<JobRow>> Store::job_locked(const std::string& job_id) {
  auto s = sql("SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, job_id);
  return first_row<JobRow>(**s, read_job_row);
}

Status Store::append_record_locked(StoredRecord& record) {
  // A tenant's appends are serialized: SQLite's BEGIN IMMEDIATE serializes
  // every writer already. On PostgreSQL several nodes write at once, so the
  // transaction takes the tenant's advisory lock before it reads the head; it
  // is held to COMMIT (or ROLLBACK), and other tenants' appends never wait for
  // it. A lock, not a row lock on chain_heads: a tenant's first append has no
  // head row to lock (docs/store.md "PostgreSQL").
  //
  // A batch of several writes never waits for a chain lock: it would hold
  // other tenants' locks meanwhile, and two nodes taking two tenants' locks in
  // opposite orders deadlock. It tries the lock; when another node holds it,
  // the write is put off (kUnavailable) and run alone after the batch, where
  // waiting holds nothing another node could be waiting for.
  if (db_->dialect() == Dialect::kPostgres) {
    if (shared_batch_ && busy_chains_.contains(record.tenant_id))
      return fail(ErrorKind::kUnavailable, "the chain of tenant " + record.tenant_id + " is busy");
    auto lock = sql(shared_batch_ ? "SELECT pg_try_advisory_xact_lock(hashtextextended(?1, 0))"
                                  : "SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))::text");
    if (!lock) return std::unexpected(lock.error());
    (*lock)->bind(1, record.tenant_id);
    auto row = (*lock)->step();
    if (!row) return std::unexpected(row.error());
    if (shared_batch_ && (!*row || (*lock)->int64(0) != 1)) {
      busy_chains_.insert(record.tenant_id);  // later writes of this tenant wait too: order kept
      return fail(ErrorKind::kUnavailable, "the chain of tenant " + record.tenant_id + " is busy");
    }
  }
  {
    auto s = sql("SELECT seq, hash FROM chain_heads WHERE tenant_id = ?1");
    if (!s) return std::unexpected(s.error());
    (*s)->bind(1, record.tenant_id);
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    record.seq = *row ? (*s)->int64(0) + 1 : 1;
    record.prev_hash = *row ? (*s)->text(1) : std::string(kZeroHash);
  }
  record.hash = record_hash(record.prev_hash, record.json);
  auto insert = sql(
      "INSERT INTO records (tenant_id, seq, job_id, prev_hash, hash, json, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!insert) return std::unexpected(insert.error());
  (*insert)
      ->bind(1, record.tenant_id)
      .bind(2, record.seq)
      .bind(3, record.job_id)
      .bind(4, record.prev_hash)
      .bind(5, record.hash)
      .bind(6, record.json)
      .bind(7, record.created_at);
  if (auto st = (*insert)->run(); !st) return st;
  auto head = sql(
      "INSERT INTO chain_heads (tenant_id, seq, hash) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (tenant_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
  if (!head) return std::unexpected(head.error());
  (*head)->bind(1, record.tenant_id).bind(2, record.seq).bind(3, record.hash);
  return (*head)->run();
}

Result<StoredRecord> Store::finish_job(const std::string& job_id, const std::string& outcome,
                                       const std::string& finished_at,
                                       const std::string& record_json,
                                       const std::vector<ArtifactRow>& artifacts) {
  // Refusals are kInvalid, kNotFound or kRefused: trying again gives the same
  // answer. A failure of the store itself (kInternal, kUnavailable) may pass.
  if (outcome.empty()) return fail(ErrorKind::kInvalid, "finishing job '" + job_id + "' without an outcome");
  if (!nlohmann::json::accept(record_json))
    return fail(ErrorKind::kInvalid, "the record of job '" + job_id + "' is not JSON");
  for (const auto& a : artifacts)
    if (!is_sha256_hex(a.sha256) || a.size > INT64_MAX)
      return fail(ErrorKind::kInvalid, "artifact '" + a.name + "' of job '" + job_id + "' has a bad sha256 or size");
  std::string at = finished_at.empty() ? jobs::now_rfc3339() : finished_at;

  StoredRecord record;
  auto st = write(
      [&]() -> Status {
        auto job = job_locked(job_id);
        if (!job) return std::unexpected(job.error());
        if (!*job) return fail(ErrorKind::kNotFound, "no job '" + job_id + "'");
        if ((*job)->state == JobState::kFinished)
          return fail(ErrorKind::kRefused, "job '" + job_id + "' already finished");

        record = StoredRecord{};
        record.tenant_id = (*job)->tenant_id;
        record.job_id = job_id;
        record.json = record_json;
        record.created_at = at;
        if (auto st = append_record_locked(record); !st) return st;

        auto update = sql("UPDATE jobs SET state = 'finished', outcome = ?2, finished_at = ?3 WHERE id = ?1");
        if (!update) return std::unexpected(update.error());
        (*update)->bind(1, job_id).bind(2, outcome).bind(3, at);
        if (auto st = (*update)->run(); !st) return st;
        if (auto st = notify_locked(kChannelFinished, job_id); !st) return st;

        for (const auto& a : artifacts) {
          auto s = sql("INSERT INTO artifacts (job_id, name, sha256, type, size) VALUES (?1, ?2, ?3, ?4, ?5)");
          if (!s) return std::unexpected(s.error());
          (*s)->bind(1, job_id).bind(2, a.name).bind(3, a.sha256).bind(4, a.type).bind(5, static_cast<int64_t>(a.size));
          if (auto st = (*s)->run(); !st) return st;
        }
        return {};
      },
      [&] {
        for (const auto& a : artifacts)
          if (auto it = unclaimed_artifacts_.find(a.sha256); it != unclaimed_artifacts_.end())
            unclaimed_artifacts_.erase(it);
      });
  if (!st) return std::unexpected(st.error());
  return record;
}

Result<std::optional<JobRow>> Store::job(const std::string& tenant_id, const std::string& job_id) {
  std::lock_guard lock(mu_);
  auto job = job_locked(job_id);
  if (!job) return job;
  if (*job && (*job)->tenant_id != tenant_id) return std::optional<JobRow>();
  return job;
}

Result<std::optional<JobRow>> Store::job_of_any_tenant(const std::string& job_id) {
  std::lock_guard lock(mu_);
  return job_locked(job_id);
}

Result<JobPage> Store::jobs(const std::string& tenant_id, const JobFilter& filter) {
  // "" would read as every tenant below: a tenant-scoped caller never gets that by accident.
  if (tenant_id.empty()) return fail("listing jobs needs a tenant");
  return jobs_where(&tenant_id, filter);
}

Result<JobPage> Store::jobs_of_every_tenant(const JobFilter& filter) { return jobs_where(nullptr, filter); }

Result<JobPage> Store::jobs_where(const std::string* tenant_id, const JobFilter& filter) {
  int limit = filter.limit < 1 ? 50 : std::min(filter.limit, 1000);
  std::optional<std::pair<std::string, int64_t>> after;
  if (!filter.cursor.empty()) {
    after = decode_cursor(filter.cursor);
    if (!after) return fail("the cursor is not valid");
  }
  std::lock_guard lock(mu_);
  // The same query on both backends but for reading the image out of the
  // request's JSON (PostgreSQL: airlock_json() from the schema). A parameter
  // that may be NULL is used in a comparison first: PostgreSQL takes its type
  // from its first use, and `? IS NULL` gives none.
#define JOBS_WHERE(IMAGE)                                                         \
  "SELECT " JOB_COLUMNS                                                           \
  " FROM jobs WHERE (tenant_id = ?1 OR ?1 IS NULL)"                               \
  " AND (state = ?2 OR ?2 IS NULL)"                                               \
  " AND (?3 = '' OR outcome = ?3)"                                                \
  " AND (?4 = '' OR created_at > ?4)"                                             \
  " AND (?5 = '' OR created_at < ?5)"                                             \
  " AND (created_at < ?6 OR (created_at = ?6 AND n < ?7) OR ?6 IS NULL)"          \
  " AND (?9 = '' OR " IMAGE " = ?9 OR substr(" IMAGE ", 1, length(?9) + 1) = ?9 || '@')" \
  " ORDER BY created_at DESC, n DESC LIMIT ?8"
  static constexpr const char* kSqlite =
      JOBS_WHERE("CASE WHEN json_valid(request_json) THEN json_extract(request_json, '$.image') END");
  static constexpr const char* kPostgres = JOBS_WHERE("(airlock_json(request_json) ->> 'image')");
#undef JOBS_WHERE
  auto s = sql(db_->dialect() == Dialect::kPostgres ? kPostgres : kSqlite);
  if (!s) return std::unexpected(s.error());
  if (tenant_id)
    (*s)->bind(1, *tenant_id);
  else
    (*s)->bind_null(1);
  if (filter.state)
    (*s)->bind(2, to_string(*filter.state));
  else
    (*s)->bind_null(2);
  (*s)->bind(3, filter.outcome).bind(4, filter.created_after).bind(5, filter.created_before);
  if (after)
    (*s)->bind(6, after->first).bind(7, after->second);
  else
    (*s)->bind_null(6).bind_null(7);
  (*s)->bind(8, int64_t{limit} + 1);  // one more tells whether a next page exists
  (*s)->bind(9, filter.image);

  JobPage page;
  std::pair<std::string, int64_t> last;
  while (true) {
    auto row = (*s)->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.next_cursor = encode_cursor(last.first, last.second);
      break;
    }
    page.jobs.push_back(read_job_row(**s));
    last = {page.jobs.back().created_at, (*s)->int64(11)};
  }
  return page;
}

Result<std::vector<JobRow>> Store::unfinished_jobs() {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT " JOB_COLUMNS " FROM jobs WHERE state <> 'finished' ORDER BY n");
  if (!s) return std::unexpected(s.error());
  return collect_rows<JobRow>(**s, read_job_row);
}

Result<std::pair<int, int>> Store::active_jobs(const std::string& tenant_id) {
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT count(*) FILTER (WHERE state = 'queued'), count(*) FILTER (WHERE state = 'running') "
      "FROM jobs WHERE tenant_id = ?1 AND state <> 'finished'");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id);
  auto row = (*s)->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return std::pair{0, 0};
  return std::pair{static_cast<int>((*s)->int64(0)), static_cast<int>((*s)->int64(1))};
}

Result<std::optional<StoredRecord>> Store::record(const std::string& tenant_id,
                                                  const std::string& job_id) {
  if (job_id.empty()) return std::optional<StoredRecord>();  // retention records have no job
  std::lock_guard lock(mu_);
  auto s = sql(
      "SELECT tenant_id, seq, job_id, prev_hash, hash, json, created_at FROM records "
      // job_id <> '' repeats the condition of the partial index records_job:
      // without it the planner cannot use that index for a bound ?2, and
      // walks the tenant's whole chain for every job (StoreJobPath).
      "WHERE tenant_id = ?1 AND job_id = ?2 AND job_id <> ''");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, tenant_id).bind(2, job_id);
  return first_row<StoredRecord>(**s, read_record);
}

Result<std::vector<ArtifactRow>> Store::artifacts(const std::string& job_id) {
  std::lock_guard lock(mu_);
  auto s = sql("SELECT job_id, name, sha256, type, size FROM artifacts WHERE job_id = ?1 "
               "ORDER BY name");
  if (!s) return std::unexpected(s.error());
  (*s)->bind(1, job_id);
  return collect_rows<ArtifactRow>(**s, [](const Statement& r) {
    return ArtifactRow{r.text(0), r.text(1), r.text(2), r.text(3),
                       static_cast<uint64_t>(r.int64(4))};
  });
}

}  // namespace airlock::store
