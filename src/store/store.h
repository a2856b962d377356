// The embedded store of `airlock serve`: one SQLite file in WAL mode,
// <data_dir>/airlock.db, and a content-addressed artifact directory,
// <data_dir>/artifacts/sha256/<2 hex>/<hex>. See docs/store.md.
//
// Thread safety: every method may be called from any thread. One connection
// is shared, and a mutex serializes every use of it (SQLite writes are
// serialized anyway; the calls are short). Copying artifact bytes and hashing
// happen outside the mutex. The writes of the job path (create_job,
// mark_running, finish_job, add_file, publish, the session writes) go through
// a group commit (commit_queue.h): writers that arrive while one commit is on
// its way to the disk share the next transaction and its fsync.
//
// Durability (docs/store.md "Durability"): synchronous = FULL, so a method
// that changed something returns only once that change is on disk: a job
// whose finish_job() returned is kept through a SIGKILL or a power loss. Other processes (the `airlock keys` CLI while the
// daemon runs) may open the same data directory: WAL lets them read while one
// writes, and writers wait up to 5 s for each other.
//
// Tenant isolation: every lookup that takes a tenant id answers nullopt for
// another tenant's row, exactly as for a missing one.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/cas.h"
#include "store/chain.h"
#include "store/commit_queue.h"
#include "store/sql.h"
#include "store/store_usage.h"
#include "store/types.h"

typedef struct evp_pkey_st EVP_PKEY;  // OpenSSL's (store/checkpoint.h)

namespace airlock::store {

// $AIRLOCK_DATA_DIR, or /var/lib/airlock/service.
std::string default_data_dir();

// Fails unless `scopes` is a non-empty set of "run", "read", "publish", "admin".
Status check_scopes(const std::set<std::string>& scopes);

// How Store::remove_older_than() names and signs a removal: the policy's
// retention_days, and the checkpoint key (nullptr: the record is not signed).
struct RetentionPolicy {
  uint64_t retention_days = 0;
  EVP_PKEY* signing_key = nullptr;
};

struct StoreOptions {
  // Writes committed together at most; 1 commits every write alone (no group
  // commit). The default is $AIRLOCK_STORE_MAX_BATCH when set (benchmarks
  // compare both), else 64.
  size_t max_batch = 64;
  // "" (the default): SQLite in <data_dir>/airlock.db. "postgresql://...":
  // that PostgreSQL database holds the rows (docs/store.md "PostgreSQL");
  // artifacts stay in <data_dir>/artifacts either way.
  std::string database_url;
  // Where artifacts/ (the content store) lives: "" = data_dir. Nodes of a
  // cluster share it (the service's content_dir).
  std::string content_dir;
  static StoreOptions defaults();
};

class Store {
 public:
  // Creates the directory (0700), the database and the artifact directory;
  // migrates an older schema.
  static Result<std::unique_ptr<Store>> open(const std::string& data_dir,
                                             StoreOptions options = StoreOptions::defaults());
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& data_dir() const { return data_dir_; }
  Dialect dialect() const { return db_->dialect(); }
  // The database engine's work so far (Connection::vm_steps): a test counts
  // it per job to find a query that visits rows in proportion to history.
  uint64_t sql_vm_steps() {
    std::lock_guard lock(mu_);
    return db_->vm_steps();
  }

  // Tenants. Names are unique.
  Result<Tenant> create_tenant(const std::string& name, const TenantLimits& limits);
  Result<std::optional<Tenant>> tenant(const std::string& id);
  Result<std::optional<Tenant>> tenant_by_name(const std::string& name);
  Result<std::vector<Tenant>> tenants();

  // API keys: 32 random bytes shown once as "alk_<base64url>"; only
  // sha256(secret) is stored; the id is 16 random hex characters.
  // Returns the key and its secret.
  Result<std::pair<ApiKey, std::string>> create_key(const std::string& tenant_id,
                                                    const std::string& name,
                                                    const std::set<std::string>& scopes);
  // The key of `secret` if it exists and is not revoked.
  Result<std::optional<ApiKey>> authenticate(const std::string& secret);
  Result<std::vector<ApiKey>> keys(const std::string& tenant_id /* "" = all */);
  Result<std::optional<ApiKey>> key(const std::string& key_id);
  Status revoke_key(const std::string& key_id);

  // Uploaded input files (the service streams the body to disk first).
  Result<FileRow> add_file(const FileRow& row);  // id and created_at generated if empty
  Result<std::optional<FileRow>> file(const std::string& tenant_id, const std::string& id);

  // Jobs. A new job is always queued. With a non-empty idempotency_key, an
  // existing job of the same tenant and key is returned instead (second: false).
  // id and created_at are generated if empty. `answers`: the data requests a
  // follow-up answers (by_job is set to the new job's id), written in the
  // same transaction as the job, as answer_data_requests() writes them: when
  // one already has an answer, refused (kRefused) and nothing is written, no
  // job either. An idempotent replay writes no answer.
  Result<std::pair<JobRow, bool>> create_job(const JobRow& row,
                                             const std::vector<DataRequestAnswer>& answers = {});
  // queued -> running; fails if the job is not queued. With a node_id, refused
  // (kRefused) unless that node claimed the job ("" = no check, role all).
  Status mark_running(const std::string& job_id, int pid, const std::string& at,
                      const std::string& node_id = "");
  // In one transaction: the job (queued or running) becomes finished with
  // `outcome`; the record is appended to its tenant's chain (created_at =
  // finished_at); the artifact rows are added. Fails if already finished.
  Result<StoredRecord> finish_job(const std::string& job_id, const std::string& outcome,
                                  const std::string& finished_at, const std::string& record_json,
                                  const std::vector<ArtifactRow>& artifacts);
  Result<std::optional<JobRow>> job(const std::string& tenant_id, const std::string& job_id);
  // Newest first (created_at, then insertion order). A cursor stays valid
  // while jobs are added: no job is repeated or skipped across pages.
  Result<JobPage> jobs(const std::string& tenant_id, const JobFilter& filter);
  // For an admin key only: a job of any tenant, and the jobs of every tenant.
  Result<std::optional<JobRow>> job_of_any_tenant(const std::string& job_id);
  Result<JobPage> jobs_of_every_tenant(const JobFilter& filter);
  Result<std::vector<JobRow>> unfinished_jobs();  // queued or running, all tenants, oldest first
  // Queued and running jobs of one tenant, for its limits.
  Result<std::pair<int, int>> active_jobs(const std::string& tenant_id);  // (queued, running)

  Result<std::optional<StoredRecord>> record(const std::string& tenant_id,
                                             const std::string& job_id);
  Result<std::vector<ArtifactRow>> artifacts(const std::string& job_id);

  // Copies `path` into the content-addressed directory (hashing while it
  // copies; refuses a file whose sha256 is not `expected_sha256`) and returns
  // the stored path. Put artifacts before finish_job names them: a stored file
  // that no row references yet is kept from retention until then.
  Result<std::string> put_artifact(const std::string& path, const std::string& expected_sha256);
  // "" when `sha256` is not 64 lower-case hex characters.
  std::string artifact_path(const std::string& sha256) const;

  // Records that `key_id` published artifact `name` of a finished job at `at`.
  Status publish(const std::string& job_id, const std::string& name, const std::string& key_id,
                 const std::string& at);
  // (name, "key_id@at"), in the order they were published.
  Result<std::vector<std::pair<std::string, std::string>>> publications(const std::string& job_id);

  // Over the tenant's finished jobs with from <= finished_at < to ("" = unbounded);
  // cpu_ms, wall_ms and peak_memory_bytes come from the record's "usage".
  Result<Usage> usage(const std::string& tenant_id, const std::string& from,
                      const std::string& to);
  // The rows of the usage report (store_usage.cc, docs/usage.md) for one
  // tenant ("" = every tenant): jobs finished and sessions closed in
  // [from, to), open sessions, and objects kept that were stored before `to`.
  Result<std::vector<UsageRow>> usage_rows(const std::string& tenant_id, const std::string& from,
                                           const std::string& to);

  // Sessions. A new session is open; close_session() appends its record to
  // the tenant's chain and marks it closed, in one transaction (fails if it
  // is already closed). Calls are added as they end, numbered by `seq`.
  Status create_session(const SessionRow& row);
  Result<std::optional<SessionRow>> session(const std::string& tenant_id, const std::string& id);
  Result<std::vector<SessionRow>> sessions(const std::string& tenant_id, int limit);  // newest first
  // For an admin key only (the service checks the scope): any tenant's session,
  // every tenant's sessions (newest first), any tenant's call.
  Result<std::optional<SessionRow>> session_of_any_tenant(const std::string& id);
  Result<std::vector<SessionRow>> sessions_of_every_tenant(int limit);
  Result<std::optional<SessionCallRow>> session_call_of_any_tenant(const std::string& call_id);
  Result<std::vector<SessionRow>> open_sessions();  // all tenants, oldest first
  Status add_session_call(const SessionCallRow& call);
  Result<std::vector<SessionCallRow>> session_calls(const std::string& session_id);  // by seq
  // The call `call_id` if its session belongs to `tenant_id`.
  Result<std::optional<SessionCallRow>> session_call(const std::string& tenant_id, const std::string& call_id);
  Result<StoredRecord> close_session(const std::string& id, const std::string& reason, const std::string& closed_at,
                                     const std::string& record_json);

  // Data request answers (docs/data-requests.md). In one write: for each
  // answer, refused (err 0, kind kRefused, "request r1 of job J is already
  // answered by job J2") when the request already has one; else its row and a chained
  // data_request_answer record in the tenant's chain. All or none.
  Status answer_data_requests(const std::vector<DataRequestAnswer>& answers);
  // The answers of the tenant's job, by request id order of arrival.
  Result<std::vector<DataRequestAnswer>> data_request_answers(const std::string& tenant_id,
                                                              const std::string& job_id);

  // Removes, per tenant, the longest prefix of the chain whose records were
  // created before `before`, with their jobs, artifact rows and publications,
  // and the artifact files no longer referenced; appends a retention record
  // (created at `now`) to each chain it shortened. Returns the jobs removed.
  // The record names policy.retention_days and is signed with
  // policy.signing_key (the checkpoint key) when it is set
  // (store/retention_proof.h).
  Result<uint64_t> remove_older_than(const std::string& before, const std::string& now,
                                     const RetentionPolicy& policy = {});

  // --- workspace snapshots (store_snapshots.cc, docs/snapshots.md) ---

  // Where snapshot contents go (workspace::capture_tree) and come from
  // (workspace::restore_tree): the artifact directory, shared with artifacts.
  const ContentStore& contents() const { return cas_; }

  // Adds a snapshot of row.tenant_id: the manifest is parsed strictly, and
  // digest, size_bytes and entries are computed from it (a non-empty
  // row.digest must match). In one transaction: the row and one snapshot_files
  // row per distinct content. Every content the manifest names must be stored
  // (capture_tree put it there); this is checked under the store's mutex, so
  // a removal running at the same time either happened before (the add fails,
  // naming the content: capture again) or sees the new rows. created_at is
  // generated if empty. When the tenant already has this digest the existing
  // row is returned (second: false) and nothing changes.
  // With `quota_bytes`, a new snapshot that would take the tenant's
  // storage_usage() beyond it is refused (err EDQUOT, saying how much is
  // used), checked in the same transaction as the insert.
  Result<std::pair<SnapshotRow, bool>> add_snapshot(const SnapshotRow& row, uint64_t quota_bytes = UINT64_MAX);
  Result<std::optional<SnapshotRow>> snapshot(const std::string& tenant_id,
                                              const std::string& digest);
  // Newest first (created_at, then digest).
  Result<std::vector<SnapshotRow>> snapshots(const std::string& tenant_id);
  // For an admin key only: every tenant's snapshots (newest first), and the
  // snapshots of every tenant with this digest (tenants may share one).
  Result<std::vector<SnapshotRow>> snapshots_of_every_tenant();
  Result<std::vector<SnapshotRow>> snapshots_with_digest(const std::string& digest);
  // Removes the tenant's snapshot, appends a "snapshot_removed" record (reason
  // "deleted", created at `now`, "" = the current time) to the tenant's chain,
  // and removes the stored contents no snapshot and no artifact references any
  // more. false: the tenant has no such snapshot (another tenant's answers the same).
  Result<bool> delete_snapshot(const std::string& tenant_id, const std::string& digest,
                               const std::string& now = "");
  // The same for every snapshot with expires_at <= now (reason "expired").
  // Returns how many were removed.
  Result<uint64_t> expire_snapshots(const std::string& now);

  // Removes the stored contents among `sha256s` that no snapshot or artifact
  // row references and no put_artifact() is about to name: what a refused
  // capture stored (capture_tree's `created`). A capture of the same bytes
  // running at the same time then fails in add_snapshot ("take the snapshot
  // again"), never with a snapshot whose content is missing.
  void release_contents(const std::vector<std::string>& sha256s);
  // Gives up the claims of put_artifact() on `sha256s` (one each) for a job
  // that will not name them, and removes the contents nothing references.
  void release_artifacts(const std::vector<std::string>& sha256s);

  // Bytes kept for the tenant: artifacts of its jobs, its snapshots, its uploads.
  Result<StorageUsage> storage_usage(const std::string& tenant_id);

  // Recomputes every chain. Detects a changed record, a removed record (a seq
  // gap not covered by a retention record, or a missing tail), a broken
  // prev_hash link, and artifact rows whose file is missing.
  Result<VerifyReport> verify();

  // Every tenant's chain head (tenant id -> head), for checkpoints.
  Result<std::map<std::string, ChainHead>> chain_heads();
  // What the chain holds at `seq` of the tenant now: the record's hash, or
  // that a retention record removed it, or neither (no such record).
  struct LinkAt {
    std::optional<std::string> hash;
    bool removed_by_retention = false;
  };
  Result<LinkAt> link_at(const std::string& tenant_id, int64_t seq);
  // The tenant's retention records, by seq (what `verify --checkpoints`
  // checks the signatures of).
  Result<std::vector<StoredRecord>> retention_records(const std::string& tenant_id);

  // --- the queue and the nodes of a cluster (store_nodes.cc, store_claims.cc,
  // docs/store.md "Queue and nodes"). Times are RFC 3339 UTC with ms, passed in
  // by the calling node. ---

  // Adds the node, or brings a known id back up (a restart): state up, heartbeat now
  // (row.heartbeat_at, else row.started_at). What its previous life left is handled as
  // for a lost node and returned.
  Result<LostNode> register_node(const NodeRow& row);
  // heartbeat_at = now, running, sessions, warm images, state. Refused (kRefused) when
  // the node was declared lost (or left, or is unknown): its jobs were taken; it must
  // stop them and register again. Returns the ids of this node's claimed or running
  // jobs whose cancel was requested.
  Result<std::vector<std::string>> heartbeat(const Heartbeat& h);
  Result<std::vector<NodeRow>> nodes();  // every node, by id
  Result<std::optional<NodeRow>> node(const std::string& id);
  // Every node up or draining whose heartbeat_at < now - lease_ms becomes lost
  // (lost_at = now), in one transaction per node, exactly once however many nodes
  // sweep at the same time.
  Result<std::vector<LostNode>> declare_lost_nodes(const std::string& now, int64_t lease_ms);
  // Drained: state left; its claimed, unstarted jobs go back to the queue.
  Status leave_node(const std::string& node_id);
  // Claims the next claimable job for the node: state queued, node_id '', its tenant
  // below its max_running (jobs running or claimed count). Order: the tenant with the
  // fewest running or claimed jobs, then the oldest job (created_at, n). A job whose
  // image is in another up node's warm_images (that node has running < slots) and not
  // in this node's is left to that node for prefer_warm_ms after created_at. Sets
  // node_id and claimed_at; state stays queued. nullopt: nothing to claim.
  Result<std::optional<JobRow>> claim_job(const ClaimOptions& o);
  // Hands a claimed, unstarted job back to the queue; fails unless node_id holds it.
  Status release_claim(const std::string& job_id, const std::string& node_id);
  // Claimed or running: cancel_requested = 1 (the worker sees it in its next
  // heartbeat) -> true. Queued and unclaimed -> false (the caller ends it as
  // cancelled). Finished or unknown -> false.
  Result<bool> request_cancel(const std::string& job_id);
  Result<QueueCounts> queue_counts(const std::string& tenant_id /* "" = all */);

  // How the group commit has batched the writes so far.
  CommitQueue::Stats commit_stats() const { return commits_.stats(); }

 private:
  Store(std::string data_dir, std::unique_ptr<Connection> db, StoreOptions options);
  // Runs `apply` (statements only: no BEGIN/COMMIT, under mu_) in the next
  // group commit; returns once it is durable, or its error. `committed` runs
  // under mu_ after the commit. Both may run on another writer's thread, and
  // `apply` more than once (see commit_locked): it must not keep state between runs.
  Status write(std::function<Status()> apply, std::function<void()> committed = {});
  // answer_data_requests()'s statements, inside a write.
  Status answer_data_requests_locked(const std::vector<DataRequestAnswer>& answers);
  void commit_batch(const std::vector<CommitQueue::Write*>& batch);
  void commit_locked(const std::vector<CommitQueue::Write*>& batch);
  Result<StatementCache::Lease> sql(const char* text) { return statements_.get(text); }
  Result<std::optional<JobRow>> job_locked(const std::string& job_id);
  Result<JobPage> jobs_where(const std::string* tenant_id /* nullptr = every tenant */, const JobFilter& filter);
  Result<std::optional<Tenant>> tenant_locked(const char* sql, const std::string& value);
  Status append_record_locked(StoredRecord& record);
  // PostgreSQL, inside a shared batch: a tenant whose chain lock another node
  // holds. Its writes are put off and run alone after the batch (store_commit.cc).
  bool shared_batch_ = false;               // guarded by mu_
  std::set<std::string> busy_chains_;       // guarded by mu_; tenants put off in this batch
  // Puts a node's claimed, unstarted jobs back and collects its started jobs and open
  // sessions (inside a write).
  Status take_node_leftovers_locked(const std::string& node_id, LostNode& out);
  // PostgreSQL: pg_notify(channel, payload) inside the current transaction; SQLite: nothing.
  Status notify_locked(const char* channel, const std::string& payload);
  // One try of claim_job inside the current transaction. `held`: a tenant whose
  // claim lock this transaction holds already. `contended`: the first tenant
  // passed because another node held its claim lock (PostgreSQL).
  Status claim_locked(const ClaimOptions& o, int64_t now_ms, const std::string& held,
                      std::optional<JobRow>& claimed, std::string& contended);
  Result<std::optional<SnapshotRow>> snapshot_locked(const std::string& tenant_id,
                                                     const std::string& digest);
  // Deletes one snapshot's rows and appends its removal record; adds the
  // contents it released (referenced by nothing else) to `released`.
  Status remove_snapshot_locked(const SnapshotRow& row, const std::string& reason,
                                const std::string& now, std::set<std::string>& released);
  // Unlinks released contents that no row references and no put_artifact()
  // is about to name. After the commit; a failed unlink leaves a harmless file.
  void remove_unreferenced_locked(const std::set<std::string>& released);

  std::string data_dir_;
  ContentStore cas_;
  std::mutex mu_;
  std::unique_ptr<Connection> db_;    // guarded by mu_
  StatementCache statements_{db_.get()};  // guarded by mu_
  Result<StorageUsage> storage_usage_locked(const std::string& tenant_id);

  std::multiset<std::string> unclaimed_artifacts_;  // put, not yet named by finish_job (one per put)
  CommitQueue commits_;  // last: its leader uses the members above
};

}  // namespace airlock::store
