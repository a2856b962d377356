// The rows of the service's store: tenants, API keys, uploaded files, jobs,
// records (a hash chain per tenant), artifacts and workspace snapshots. Plain data, no behaviour.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace airlock::store {

struct TenantLimits {
  int max_running = 2;
  int max_queued = 50;
  uint64_t max_memory_bytes = 1ull << 30;
  uint64_t max_timeout_ms = 600000;
  uint64_t max_cpu_time_ms = 600000;
  int max_pids = 512;
};

struct Tenant {
  std::string id;
  std::string name;
  TenantLimits limits;
  std::string created_at;
};

// Scopes: "run", "read", "publish", "admin".
struct ApiKey {
  std::string id;
  std::string tenant_id;
  std::string name;
  std::set<std::string> scopes;
  std::string created_at;
  bool revoked = false;
};

struct FileRow {
  std::string id, tenant_id, name;
  uint64_t size = 0;
  std::string sha256, path, created_at;
};

enum class JobState { kQueued, kRunning, kFinished };
std::string_view to_string(JobState state);                    // "queued", "running", "finished"
std::optional<JobState> parse_job_state(std::string_view text);  // the inverse

struct JobRow {
  std::string id, tenant_id, key_id;
  JobState state = JobState::kQueued;
  std::string request_json;
  std::string idempotency_key;
  std::string created_at, started_at, finished_at;
  std::string outcome;
  int pid = 0;
  // Cluster mode (schema 4): the node that claimed it ("" = nobody), when, the
  // accepted image reference (for placement), and whether a cancel was asked.
  std::string node_id, claimed_at, image;
  bool cancel_requested = false;
};

struct ArtifactRow {
  std::string job_id, name, sha256, type;
  uint64_t size = 0;
};

// One link of a tenant's chain. Retention records have an empty job_id.
struct StoredRecord {
  std::string job_id, tenant_id;
  int64_t seq = 0;
  std::string prev_hash, hash, json, created_at;
};

struct JobFilter {
  std::optional<JobState> state;
  std::string outcome;
  std::string created_after, created_before;  // exclusive bounds; "" = unbounded
  int limit = 50;                             // < 1: 50; at most 1000
  std::string cursor;                         // opaque: pass next_cursor back
  std::string image;                          // "" = any; else the request's image name (any digest) or name@digest
};

struct JobPage {
  std::vector<JobRow> jobs;
  std::string next_cursor;  // empty when no more
};

struct Usage {
  uint64_t jobs = 0, cpu_ms = 0, wall_ms = 0, peak_memory_bytes = 0;
  std::map<std::string, uint64_t> by_outcome;
};

// A session (issue 6): open while its sandbox lives; its record joins the
// tenant's chain (job_id = session id) when it closes.
struct SessionRow {
  std::string id, tenant_id, key_id;
  std::string state = "open";  // "open" or "closed"
  std::string request_json;
  std::string created_at, closed_at, close_reason;
  std::string node_id;  // the worker that keeps it ("" = this node, role all)
};

// One ended call of a session, as stored (call_json: kind, code, status, times, usage, result).
struct SessionCallRow {
  std::string session_id, id;
  int64_t seq = 0;
  std::string call_json;
};

// A workspace snapshot of one tenant (the same content taken by two tenants is
// two rows). manifest_json is the canonical manifest (docs/snapshots.md);
// digest is "sha256:<hex>" of it.
struct SnapshotRow {
  std::string tenant_id, digest, manifest_json;
  uint64_t size_bytes = 0;  // all files together
  uint64_t entries = 0;     // directories, files and symlinks
  std::string source;       // where it was taken from, e.g. the session id
  std::string created_at;
  std::string expires_at;   // "" = never
};

// What the store keeps for one tenant, in logical bytes as each row counts
// them (the same bytes held by two rows count twice; holes count as bytes).
struct StorageUsage {
  uint64_t artifacts = 0, snapshots = 0, uploads = 0;
  uint64_t total() const { return artifacts + snapshots + uploads; }
};

// What the application decided about one data request of a finished job
// (docs/data-requests.md): answered by a follow-up job, or refused.
enum class AnswerState { kAnswered, kRefused };
struct DataRequestAnswer {
  std::string tenant_id, job_id, request_id;
  AnswerState state = AnswerState::kRefused;
  std::string by_job;  // kAnswered: the follow-up job
  std::string reason;  // kRefused
  std::string key_id;  // who decided
  std::string at;      // RFC 3339
};

// A node of a cluster (docs/store.md "Queue and nodes").
struct NodeRow {
  std::string id, role, address, state;  // state: up, draining, lost, left
  int slots = 0, running = 0, session_slots = 0, sessions = 0;
  std::vector<std::string> warm_images;
  std::string started_at, heartbeat_at, lost_at;
};

struct Heartbeat {
  std::string node_id, state;  // "up" or "draining"
  int running = 0, sessions = 0;
  std::vector<std::string> warm_images;
  std::string now;
};

// What a lost (or restarted) node left: its claimed, unstarted jobs were put back in the queue
// (`requeued`); its started jobs and open sessions are returned for the caller to end.
struct LostNode {
  NodeRow node;
  size_t requeued = 0;
  std::vector<JobRow> started_jobs;       // caller: finish as sandbox_error, reason "node lost: NODE"
  std::vector<SessionRow> open_sessions;  // caller: close with reason "node lost: NODE"
};

struct ClaimOptions {
  std::string node_id, now;
  std::vector<std::string> warm_images;  // this node's
  int64_t prefer_warm_ms = 200;          // see Store::claim_job
};

// Unfinished jobs: queued and unclaimed, claimed (still queued), running.
struct QueueCounts {
  int queued = 0, claimed = 0, running = 0;
};

struct VerifyReport {
  bool ok = true;
  uint64_t records = 0;
  std::vector<std::string> problems;  // "tenant X: record seq 5 (job Y) hash mismatch"
};

}  // namespace airlock::store
