// A cluster of `airlock serve` processes on loopback for tests: API and
// worker nodes sharing one database (SQLite in a shared data_dir, or a
// PostgreSQL database) and one content_dir, each node with its own state
// directory and log. Everything started is stopped by pid at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_helpers.h"
#include "service_fixture.h"
#include "support/http_client.h"

namespace airlock::testing {

// The nodes' shared key (cluster/node_key.h), in every node's configuration.
inline constexpr const char* kTestNodeKey = "cluster-test-node-key-0123456789abcdef";

struct ClusterOptions {
  std::string database_url;  // "": SQLite in the shared data_dir
  uint64_t node_lease_ms = 1500;
  uint64_t heartbeat_ms = 200;
};

class ClusterNodes {
 public:
  explicit ClusterNodes(ClusterOptions options);
  ~ClusterNodes();  // SIGTERM every node still running (SIGKILL if it hangs), sweep, remove

  struct Node {
    std::string id, role;
    size_t slots = 1;
    uint16_t port = 0;
    pid_t pid = -1;
    std::string state_dir, log_path;
  };
  // Starts a node (role "api" or "worker") and waits for its listener.
  Node& add(const std::string& role, const std::string& id, size_t slots = 1);
  void start(const std::string& id);   // again, after kill_hard() or term()
  void kill_hard(const std::string& id);
  // SIGTERM, then wait up to `timeout_ms`; the exit status (-1: it did not end, killed).
  int term(const std::string& id, int timeout_ms = 30000);
  Node& node(const std::string& id) { return nodes_.at(id); }
  HttpClient client(const std::string& id) { return HttpClient(nodes_.at(id).port); }
  std::string log(const std::string& id) const;
  // Every "event" line of every node's log (JSON), with "log_node" added.
  std::vector<nlohmann::json> events(const std::string& name) const;

  const std::string& data_dir() const { return data_; }
  const std::string& content_dir() const { return content_; }
  TestKey alpha;

 private:
  ClusterOptions options_;
  TempDir dir_;
  std::string data_, content_, config_;
  std::map<std::string, Node> nodes_;
};

// GET /v1/jobs/ID until its state is `state` (or the time is up): its view.
nlohmann::json wait_for_job(HttpClient& c, const TestKey& k, const std::string& id, const std::string& state,
                            int timeout_ms = 30000);

}  // namespace airlock::testing
