// airlock serve: the job service over HTTP on loopback, with embedded
// defaults (SQLite and local files under --data-dir).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/json_parse.h"
#include "http/server.h"
#include "cmd/airlock/pool_child.h"
#include "mcp/http_route.h"
#include "pool/handover.h"
#include "service/config.h"
#include "service/image_choice.h"
#include "service/descriptor_budget.h"
#include "service/job_service.h"
#include "api/routes.h"
#include "api/pool_routes.h"
#include "api/ui_routes.h"
#include "api/cluster_setup.h"
#include "api/session_routes.h"
#include "cluster/node_key.h"
#include "sessions/session_service.h"
#include "store/store.h"
#include "api/usage_routes.h"
#include "sys/descriptors.h"

using namespace airlock;

namespace {

const char* const kServeUsage =
    "usage: airlock serve [--config FILE] [--listen HOST:PORT] [--data-dir DIR] [--database-url URL] [--state-dir DIR]\n"
    "                     [--max-running N] [--max-queued N] [--max-connections N] [--retention-days N]\n"
    "                     [--tenant-max-queued N] [--tenant-storage-mb N] [--warm N] [--preloaded N]\n"
    "                     [--event-keepalive-ms N] [--content-dir DIR] [--image-dir DIR]\n"
    "                     [--role all|api|worker] [--node-id ID] [--node-address HOST:PORT]\n"
    "  Serves the job and session API (docs/openapi.json, docs/sessions.md) until SIGINT or\n"
    "  SIGTERM; open sessions are closed then. Defaults: 127.0.0.1:8470,\n"
    "  data in /var/lib/airlock/service. Create API keys with `airlock keys create`.\n"
    "  --warm N and --preloaded N keep N sandboxes ready (any command / Python with numpy,\n"
    "  pandas and matplotlib already imported, and N more for Python code that imports only\n"
    "  standard modules, from a small interpreter) for jobs of any limits (default 0).\n"
    "  --image-dir DIR is the image store: else $AIRLOCK_IMAGE_DIR, else the file's image_dir,\n"
    "  else STATE_DIR/images (the same as airlock run and airlock image).\n"
    "  --role api|worker runs one part of a cluster sharing a database and --content-dir\n"
    "  (docs/service.md, \"Many machines\"); --role all (the default) is the whole service.\n";

std::mutex log_mu;
void log_line(const nlohmann::json& j) {
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(log_mu);
  std::fputs(line.c_str(), stderr);
}

}  // namespace

int serve_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kServeUsage, stdout);
    return 0;
  }
  auto config = service::config_from_args(args);
  if (!config) {
    std::fprintf(stderr, "airlock: %s\n", config.error().message().c_str());
    return 125;
  }
  // Cluster mode needs the nodes' key (docs/sessions.md "Many machines"): checked before anything starts.
  if (service::cluster_mode(*config)) {
    if (auto key = cluster::resolve_node_key(config->node_key, config->node_key_file, true); !key) {
      std::fprintf(stderr, "airlock: %s\n", key.error().message().c_str());
      return 125;
    }
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "airlock: serve needs root (its jobs create namespaces and cgroups)\n");
    return 125;
  }
  if (config->airlock_binary.empty()) {
    char self[4096];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) config->airlock_binary.assign(self, static_cast<size_t>(n));
  }
  // Before anything opens a descriptor: the soft limit (often 1024) would
  // otherwise be what a flood of connections takes from every tenant's jobs.
  auto nofile = sys::raise_descriptor_limit();
  if (!nofile) {
    std::fprintf(stderr, "airlock: %s\n", nofile.error().message().c_str());
    return 125;
  }
  store::StoreOptions store_options = store::StoreOptions::defaults();
  store_options.database_url = config->database_url;
  store_options.content_dir = config->content_dir;
  auto store = store::Store::open(config->data_dir, store_options);
  if (!store) {
    std::fprintf(stderr, "airlock: cannot open the store: %s\n", store.error().message().c_str());
    return 125;
  }
  // SIGINT/SIGTERM are taken by sigwait below; every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The warm pool serves this service's jobs (the engine looks for pool.sock
  // in the state directory). It runs as a child process of its own: cloning sandboxes from this large, threaded process
  // cost ~10 ms more CPU per job than from a small one (docs/performance.md).
  std::optional<PoolChild> pool;
  // (An API node runs no sandbox.)
  if (config->role != service::Role::kApi && (config->warm_pool > 0 || config->preloaded_pool > 0)) {
    // Warm sandboxes for every pool image, and for the default image.
    std::vector<std::string> pool_images = config->pool_images;
    if (config->default_image != "host") pool_images.push_back(config->default_image);
    auto started = PoolChild::start(config->airlock_binary, config->state_dir, config->warm_pool,
                                    config->preloaded_pool, pool_images, service::service_image_dir(*config),
                                    {// Every tenant's preloaded interpreters on its first preloaded job.
                                     "--preload-at-start", "no", "--preloaded-tenants",
                                     std::to_string(config->preloaded_tenants), "--preloaded-renew-jobs",
                                     std::to_string(config->preloaded_renew_jobs)});
    if (!started) {
      std::fprintf(stderr, "airlock: cannot start the warm pool: %s\n", started.error().message().c_str());
      return 125;
    }
    pool.emplace(std::move(*started));
    log_line({{"event", "warm_pool"}, {"pid", pool->pid()}, {"warm", config->warm_pool}, {"images", pool_images},
              {"preloaded", config->preloaded_pool}, {"preloaded_tenants", config->preloaded_tenants},
              {"preloaded_renew_jobs", config->preloaded_renew_jobs}});
  }

  service::JobService jobs(*config, **store);
  jobs.set_logger(log_line);
  if (auto st = jobs.start(); !st) {
    std::fprintf(stderr, "airlock: cannot start the job service: %s\n", st.error().message().c_str());
    return 125;
  }
  service::SessionService sessions(*config, **store, jobs);
  if (auto st = sessions.start(); !st) {
    std::fprintf(stderr, "airlock: cannot start the session service: %s\n", st.error().message().c_str());
    jobs.stop();
    return 125;
  }
  api::ServerOptions options;
  options.address = config->listen_address;
  options.port = config->listen_port;
  options.threads = config->http_threads;
  options.event_keepalive_ms = static_cast<int>(config->event_keepalive_ms);
  size_t max_running = config->max_running ? config->max_running : std::max(1u, std::thread::hardware_concurrency());
  size_t interpreters = config->preloaded_pool > 0 ? config->preloaded_tenants : 0;
  auto budget = service::plan_descriptors(nofile->soft, max_running, config->max_sessions, config->max_connections,
                                          interpreters);
  options.max_connections = budget.max_connections;
  // Checked at every accept against the descriptors open then: connections
  // are refused before they take what the jobs and sessions may need.
  options.descriptor_reserve = budget.reserved;
  log_line({{"event", "descriptors"}, {"nofile_soft_was", nofile->before}, {"nofile_soft", nofile->soft},
            {"nofile_hard", nofile->hard}, {"reserved", budget.reserved},
            {"max_connections", budget.max_connections}, {"configured_max_connections", config->max_connections}});
  if (budget.cramped) {
    log_line({{"event", "warning"},
              {"msg", "RLIMIT_NOFILE leaves fewer HTTP connections than configured; raise the hard limit "
                      "(LimitNOFILE= in systemd)"}});
  }
  options.spool_dir = service::node_dir(*config) + "/spool";
  options.access_log = [](const nlohmann::json& j) {
    nlohmann::json line = j;
    line["event"] = "http";
    log_line(line);
  };
  mcp::McpRouteOptions mcp_options;
  mcp_options.listen_address = config->listen_address;
  mcp_options.event_keepalive_ms = static_cast<int>(config->event_keepalive_ms);
  mcp::McpRoute mcp_route(mcp_options);  // outlives the server: its calls end when the server stops
  // A worker's listener is gated by the node key; an API node forwards session calls (and live job output).
  auto node_http = service::NodeHttp::make(*config, **store, jobs, options, log_line);
  if (!node_http) {
    std::fprintf(stderr, "airlock: %s\n", node_http.error().message().c_str());
    sessions.stop();
    jobs.stop();
    return 125;
  }
  api::HttpServer server(options);
  service::install_routes(server, jobs, (*node_http)->routing());
  service::install_session_routes(server, jobs, sessions, (*node_http)->routing());
  service::PoolStatus pool_status{config->warm_pool, config->preloaded_pool, config->pool_images, {}};
  if (config->default_image != "host") pool_status.images.push_back(config->default_image);
  if (pool) {
    pool_status.running = [pid = pool->pid()] {
      // WNOWAIT: only looks; PoolChild::stop still reaps it.
      siginfo_t info{};
      return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
    };
  }
  if (config->preloaded_pool > 0) {
    // What the per-tenant interpreters hold now, the pool's (its stats) and the sessions'.
    pool_status.interpreters = [&sessions, socket = jobs::pool_socket_path(config->state_dir)] {
      nlohmann::json pool_side = nlohmann::json::array();
      if (auto text = jobs::pool_stats(socket)) {
        auto stats = parse_json_or_discarded(*text);
        if (stats.is_object() && stats.contains("preloaded_interpreters")) pool_side = stats["preloaded_interpreters"];
      }
      return nlohmann::json{{"jobs", pool_side}, {"sessions", sessions.interpreter_stats()}};
    };
  }
  service::install_pool_routes(server, jobs, pool_status);
  service::install_ui_routes(server);
  service::install_usage_routes(server, jobs, **store);
  mcp_route.install(server, jobs);
  auto port = server.start();
  if (!port) {
    std::fprintf(stderr, "airlock: cannot listen on %s:%u: %s\n", config->listen_address.c_str(),
                 config->listen_port, port.error().message().c_str());
    sessions.stop();
    jobs.stop();
    return 125;
  }
  mcp_route.set_port(*port);
  std::printf("airlock serve: listening on http://%s:%u (data in %s)\n", config->listen_address.c_str(), *port,
              config->data_dir.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log_line({{"event", "stopping"}, {"signal", sig}});
  // A worker drains on SIGTERM: its running jobs finish (the listener keeps
  // answering /healthz meanwhile), then it leaves the cluster.
  if (sig == SIGTERM && config->role == service::Role::kWorker) jobs.drain();
  server.stop();
  (*node_http)->stop();  // forwarded requests end once their exchanges closed
  sessions.stop();
  jobs.stop();
  if (pool) (void)pool->stop();
  return 0;
}
