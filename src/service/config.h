// airlock serve's configuration: a TOML file, then command-line flags over it.
// Every field has a default, so no file is needed on one machine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "requests/data_request.h"
#include "base/result.h"
#include "egress/policy.h"
#include "usage/rate_card.h"
#include "validate/checks.h"

namespace airlock::service {

// [tenants.NAME] in the configuration: what one tenant (by name) gets beyond
// the defaults below.
struct TenantSettings {
  unsigned weight = 1;                        // share of job starts when tenants compete (1-100)
  std::optional<size_t> max_queued;           // over tenant_max_queued
  std::optional<uint64_t> storage_bytes;      // over tenant_storage_bytes
  // The image names its jobs and sessions may use ("host" included only if
  // listed); unset: any image of the store, and host.
  std::optional<std::vector<std::string>> images;
};

// Which part of a service this process is (docs/service.md "Many machines").
// all: the whole service on one node, its queue in memory (the default).
// api: answers requests and admits jobs into the store's queue; runs nothing.
// worker: claims jobs from the store and runs them, keeps sessions.
enum class Role { kAll, kApi, kWorker };
std::string_view role_name(Role r);
std::optional<Role> parse_role(std::string_view text);

struct ServiceConfig {
  std::string listen_address = "127.0.0.1";
  uint16_t listen_port = 8470;
  std::string data_dir = "/var/lib/airlock/service";  // database, uploads, artifacts ($AIRLOCK_DATA_DIR)
  // "": SQLite in data_dir. "postgresql://user@host:port/db": the rows go to
  // that PostgreSQL database (docs/store.md "PostgreSQL"); files stay in data_dir.
  std::string database_url;
  std::string state_dir = "/var/lib/airlock";         // airlock run's state
  // Uploads (files/) and the content store (artifacts/): shared by every node
  // of a cluster (NFS). "": data_dir, the layout of one machine.
  std::string content_dir;
  // Cluster mode (role api or worker; CLUSTER-CONTRACT.md). node_id "": the
  // host name; node_address "": listen_address:listen_port (must be set when
  // the port is 0). A node whose heartbeat is older than node_lease_ms is lost.
  Role role = Role::kAll;
  std::string node_id;
  std::string node_address;
  uint64_t node_lease_ms = 10'000;
  uint64_t heartbeat_ms = 1'000;
  // Each running job's scratch (its code file, collected outputs, airlock's
  // record before it is stored): a tmpfs by default, nothing there needs to
  // survive a restart. "": /run/airlock/work/<12 hex of sha256(data_dir)>.
  std::string work_dir;
  std::string airlock_binary;                         // default: this executable
  int http_threads = 2;
  // HTTP connections open at once; lowered at start to what RLIMIT_NOFILE
  // leaves after the reserve for jobs and sessions (service/descriptor_budget.h).
  size_t max_connections = 1024;
  size_t max_running = 0;  // 0: the number of cores
  size_t max_queued = 64;
  // Queued jobs of one tenant at most (and never more than the tenant's own
  // stored limit). 0: a quarter of max_queued, at least 1.
  size_t tenant_max_queued = 0;
  // Bytes the store keeps for one tenant: artifacts, snapshots and uploads.
  uint64_t tenant_storage_bytes = 10ull << 30;
  std::map<std::string, TenantSettings> tenants;  // by tenant name
  uint64_t max_upload_bytes = 64ull << 20;
  uint64_t log_buffer_bytes = 1ull << 20;  // live output kept per job for SSE replay
  // What a job may ask the application for (docs/data-requests.md); the
  // same for every tenant.
  requests::Limits data_request_limits;
  // An event stream silent this long gets a ": keep-alive" comment, so a
  // client tells a call that prints nothing from a dead connection.
  uint64_t event_keepalive_ms = 15'000;
  uint64_t retention_days = 30;            // records and artifacts older than this are removed
  uint64_t retention_interval_s = 3600;
  // Warm pool (docs/performance.md): sandboxes kept ready for jobs with the
  // default limits. 0 turns a kind off.
  size_t warm_pool = 0;       // for any command
  size_t preloaded_pool = 0;  // Python jobs, forked from the preloaded interpreter
  // Preloaded interpreters are per tenant (pool/tenant_interpreters.h): how
  // many tenants hold theirs at once, and how many sandboxes one makes
  // before a fresh one replaces it (0: never).
  size_t preloaded_tenants = 8;
  uint64_t preloaded_renew_jobs = 100;
  // Images (docs/image-mounts.md): the store, the image of a request that
  // names none, and the images that get pools (besides the default).
  std::string image_dir;              // "": <state_dir>/images
  std::string default_image = "host";
  std::vector<std::string> pool_images;
  // Sessions (docs/sessions.md): how many may be open, and their clocks.
  size_t max_sessions = 16;
  size_t max_sessions_per_tenant = 4;
  int session_idle_timeout_s = 600;          // the default; a session may ask for less or more
  int session_max_idle_timeout_s = 86'400;   // the most a session may ask for
  int session_max_lifetime_s = 14'400;       // the default and the most a session may ask for
  // What the service keeps of each session call's answer (docs/sessions.md),
  // and of a session's ended calls together in memory (older ones are read
  // from the store).
  uint64_t session_value_cap_bytes = 1ull << 20;
  uint64_t session_html_cap_bytes = 1ull << 20;
  uint64_t session_error_cap_bytes = 256ull << 10;
  uint64_t session_figures_cap_bytes = 8ull << 20;
  uint64_t session_kept_calls_bytes = 32ull << 20;
  // What a job's checks may spend on the host (check_cpu_ms: all of one job's checks together).
  validate::CheckLimits check_limits;
  // The image whose poppler-utils (pdfinfo, pdftotext) read PDFs for the pdf
  // check, in a sandbox of their own (docs/checks.md).
  std::string pdf_check_image = "host";
  uint64_t snapshot_ttl_s = 7 * 86'400;      // snapshots are removed this long after they were taken
  uint64_t snapshot_max_bytes = 1ull << 30;  // of one snapshot's files together
  uint64_t snapshot_expiry_interval_s = 60;
  // Network egress (docs/egress.md): the files every job's gateway uses, and
  // per tenant (by name) the destinations its jobs may name at most.
  std::string secrets_file;  // root-only TOML of credentials ("" none)
  std::string egress_hosts;  // static name overrides ("" none)
  std::string egress_ca;     // CA certificates for tls destinations ("" the system's)
  std::map<std::string, std::vector<egress::Rule>> egress_caps;
  // Signed checkpoints of the chain heads (docs/store.md, "Checkpoints"): the
  // Ed25519 key (outside data_dir), the append-only file they go to (both or
  // neither), and how often; one is also written at shutdown.
  std::string checkpoint_key;
  std::string checkpoint_file;
  uint64_t checkpoint_interval_s = 300;
  // Many machines (docs/sessions.md "Many machines"): the secret every node shares, inline or
  // in a file of its own (mode 0600); never a flag. Required for role api
  // and worker (cluster/node_key.h resolves and checks it at start).
  std::string node_key;
  std::string node_key_file;
  // [rates]: what usage costs (docs/usage.md, GET /v1/usage).
  usage::RateCard rates;
};

bool cluster_mode(const ServiceConfig& c);  // role api or worker
// Where uploads and artifacts live: content_dir, or data_dir when unset.
std::string content_dir(const ServiceConfig& c);
// This node's own directory for what no other node shares (the spool of
// request bodies): data_dir itself for role all, data_dir/nodes/NODE_ID in
// cluster mode (nodes on one box may share data_dir, the SQLite database's).
std::string node_dir(const ServiceConfig& c);
// After the file and the flags: fills node_id (from `hostname`) and
// node_address, and checks the cluster keys together (a lease shorter than
// two heartbeats, a node id that is not a plain name, port 0 without a
// node_address). The node key check of cluster mode is check_node_key().
Status finish_cluster_config(ServiceConfig& c, const std::string& hostname);
// Cluster mode needs the nodes' shared secret (branch forward fills this in).
Status check_node_key(const ServiceConfig& c);

// The effective per-tenant values for the tenant called `name`.
size_t tenant_max_queued(const ServiceConfig& c, const std::string& name);
uint64_t tenant_storage_bytes(const ServiceConfig& c, const std::string& name);
unsigned tenant_weight(const ServiceConfig& c, const std::string& name);
// Whether the tenant's jobs and sessions may use the image named `name`.
bool tenant_may_use_image(const ServiceConfig& c, const std::string& tenant, const std::string& name);

// Reads `path` (TOML). Unknown keys are an error, so a typo is not silently ignored.
Result<ServiceConfig> load_config(const std::string& path, ServiceConfig base = {});
Result<ServiceConfig> parse_config(const std::string& toml_text, ServiceConfig base = {});
// "--listen 127.0.0.1:0", "--data-dir D", "--state-dir D", "--max-running N", "--max-queued N",
// "--max-connections N", "--tenant-max-queued N", "--tenant-storage-mb N",
// "--warm N", "--preloaded N", "--image-dir DIR", "--config FILE" (read first, whatever its
// position). image_dir: --image-dir, else $AIRLOCK_IMAGE_DIR, else the file's image_dir.
Result<ServiceConfig> config_from_args(const std::vector<std::string>& args);
// The image store's directory, in that order (flag > environment > configuration
// file > default): the first that is not empty; "" means <state_dir>/images.
std::string choose_image_dir(const std::string& flag, const std::string& env, const std::string& config);

}  // namespace airlock::service
