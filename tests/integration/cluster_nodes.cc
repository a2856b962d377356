#include "cluster_nodes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "store/store.h"
#include "support/serve_launch.h"
#include "sys/file_io.h"

namespace airlock::testing {
namespace {

// A port free on loopback now (the node binds it a moment later; its
// node_address must name it, so port 0 will not do).
uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

ClusterNodes::ClusterNodes(ClusterOptions options)
    : options_(std::move(options)), data_(dir_.sub("data")), content_(dir_.sub("content")), config_(dir_.sub("cluster.toml")) {
  std::string toml = "node_lease_ms = " + std::to_string(options_.node_lease_ms) +
                     "\nheartbeat_ms = " + std::to_string(options_.heartbeat_ms) + "\nnode_key = \"" + kTestNodeKey +
                     "\"\n";
  if (!sys::write_file_atomic(config_, toml, 0600)) throw std::runtime_error("write " + config_);
  store::StoreOptions so = store::StoreOptions::defaults();
  so.database_url = options_.database_url;
  so.content_dir = content_;
  auto s = store::Store::open(data_, so);
  if (!s) throw std::runtime_error("open store: " + s.error().message());
  store::TenantLimits limits;
  limits.max_running = 8;
  limits.max_queued = 64;
  auto a = (*s)->create_tenant("alpha", limits);
  if (!a) throw std::runtime_error("create tenant: " + a.error().message());
  auto key = (*s)->create_key(a->id, "test", {"run", "read", "publish"});
  if (!key) throw std::runtime_error("create key: " + key.error().message());
  alpha = {"alpha", key->second, key->first.id};
}

ClusterNodes::~ClusterNodes() {
  for (auto& [id, n] : nodes_)
    if (n.pid > 0) ::kill(n.pid, SIGTERM);
  for (auto& [id, n] : nodes_)
    if (n.pid > 0) term(id, 20000);
  for (auto& [id, n] : nodes_) {
    run_airlock({"sweep", "--state-dir", n.state_dir});
    std::error_code ec;
    std::filesystem::remove_all(default_work_dir(data_ + "/nodes/" + id), ec);  // what a killed node left there
  }
}

ClusterNodes::Node& ClusterNodes::add(const std::string& role, const std::string& id, size_t slots) {
  Node n;
  n.id = id;
  n.role = role;
  n.slots = slots;
  n.state_dir = dir_.sub("state-" + id);
  n.log_path = dir_.sub(id + ".log");
  ::mkdir(n.state_dir.c_str(), 0711);
  nodes_[id] = n;
  start(id);
  return nodes_.at(id);
}

void ClusterNodes::start(const std::string& id) {
  Node& n = nodes_.at(id);
  if (n.port == 0) n.port = free_port();
  const std::string address = "127.0.0.1:" + std::to_string(n.port);
  // $AIRLOCK_TEST_SERVE_BINARY: another build (an older one, to see a test fail without a fix).
  const char* other = std::getenv("AIRLOCK_TEST_SERVE_BINARY");
  std::vector<std::string> args = {other && *other ? other : AIRLOCK_BINARY, "serve", "--config", config_, "--role", n.role,
                                   "--node-id", n.id, "--listen", address, "--data-dir", data_,
                                   "--content-dir", content_, "--state-dir", n.state_dir,
                                   "--max-running", std::to_string(n.slots)};
  if (!options_.database_url.empty()) {
    args.push_back("--database-url");
    args.push_back(options_.database_url);
  }
  LaunchedServe serve = launch_serve(args, n.log_path, O_APPEND, 0644);
  n.pid = serve.pid;
  if (serve.pid < 0) throw std::runtime_error("start airlock serve");
  if (serve.port == 0) throw std::runtime_error(id + " did not start: " + serve.first_line + "\n" + log(id));
}

void ClusterNodes::kill_hard(const std::string& id) {
  Node& n = nodes_.at(id);
  if (n.pid <= 0) return;
  ::kill(n.pid, SIGKILL);
  ::waitpid(n.pid, nullptr, 0);
  n.pid = -1;
}

int ClusterNodes::term(const std::string& id, int timeout_ms) {
  Node& n = nodes_.at(id);
  if (n.pid <= 0) return -1;
  ::kill(n.pid, SIGTERM);
  int status = 0;
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (::waitpid(n.pid, &status, WNOHANG) == n.pid) {
      n.pid = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_hard(id);
  return -1;
}

std::string ClusterNodes::log(const std::string& id) const { return read_text(nodes_.at(id).log_path); }

std::vector<nlohmann::json> ClusterNodes::events(const std::string& name) const {
  std::vector<nlohmann::json> out;
  for (const auto& [id, n] : nodes_) {
    std::istringstream in(read_text(n.log_path));
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == name) {
        j["log_node"] = id;
        out.push_back(j);
      }
    }
  }
  return out;
}

nlohmann::json wait_for_job(HttpClient& c, const TestKey& k, const std::string& id, const std::string& state,
                            int timeout_ms) {
  nlohmann::json j;
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    auto r = c.request("GET", "/v1/jobs/" + id, "", k.auth());
    if (r.status == 200) {
      j = r.json();
      if (j["state"] == state) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return j;
}

}  // namespace airlock::testing
