// Many machines on one box, for tests and benchmarks: a hub network namespace
// with a bridge (10.A.B.1/24, a /24 no address of the host uses), PostgreSQL
// listening on the hub's address, and one namespace per node with a veth on
// the bridge (10.A.B.11, .12, ...), where `airlock serve` runs. The test talks
// HTTP from the hub (NetnsHttpClient). Everything lives inside namespaces the
// harness made, so nothing is added to the host's own links, and it is all
// removed when the ClusterNet goes: its processes by pid, the namespaces (the
// bridge and the veths go with them), the temporary directory.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "support/http_client.h"
#include "support/postgres_server.h"

namespace airlock::testing {

// Runs `fn` on a short-lived thread that entered the named network namespace
// (/run/netns/NAME); sockets `fn` makes are that namespace's. The caller's
// threads never change namespace.
Status in_netns(const std::string& netns, const std::function<void()>& fn);

// The service's own HTTP client, whose connections are made from inside a
// named network namespace: one thread of its own entered it and runs every
// request (HttpClient opens its sockets on the calling thread, reconnects
// included). Calls from several threads are served one at a time.
class NetnsHttpClient {
 public:
  NetnsHttpClient(std::string netns, std::string host, uint16_t port, int timeout_ms = 30000);
  ~NetnsHttpClient();
  NetnsHttpClient(const NetnsHttpClient&) = delete;
  NetnsHttpClient& operator=(const NetnsHttpClient&) = delete;

  // status 0 and `error` set when the namespace could not be entered.
  Response request(const std::string& method, const std::string& target, const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {});

 private:
  void loop(std::string netns, std::string host, uint16_t port, int timeout_ms);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void(HttpClient*)>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

class ClusterNet {
 public:
  struct Options {
    int nodes = 4;
    bool postgres = true;  // a server on the hub's address
    bool durable_postgres = false;
  };
  // An `airlock serve` in a node's namespace.
  struct Serve {
    std::vector<std::string> argv;  // the whole command line; argv[0] the binary
    std::string state_dir;          // swept (`airlock sweep`) when the harness kills it at the end
  };
  static constexpr uint16_t kNodePort = 8080;  // every node's own port space: the same port on each

  static Result<std::unique_ptr<ClusterNet>> create(Options options);
  ~ClusterNet();
  ClusterNet(const ClusterNet&) = delete;
  ClusterNet& operator=(const ClusterNet&) = delete;

  const std::string& hub() const { return hub_; }
  const std::string& hub_address() const { return hub_address_; }
  int nodes() const { return static_cast<int>(nodes_.size()); }
  const std::string& node_netns(int i) const { return nodes_.at(i).netns; }
  const std::string& node_address(int i) const { return nodes_.at(i).address; }
  std::string node_listen(int i) const { return node_address(i) + ":" + std::to_string(kNodePort); }
  // Every namespace the harness made (the hub first): for leak checks.
  std::vector<std::string> namespaces() const;
  const std::string& dir() const { return dir_; }  // the harness's temporary directory (0711)

  PostgresServer* postgres() { return postgres_.get(); }
  // A new database on the hub's server; `url` for the nodes (TCP on the hub's
  // address), `local_url` for the test process (unix socket).
  struct Database {
    std::string url, local_url;
  };
  Result<Database> create_database();

  // Starts `serve` in node i's namespace (stderr to log_path(i), appended) and
  // waits for its first line; fails when it printed no port. One serve per node.
  Status start(int i, Serve serve);
  Status restart(int i);          // the same command line again, after kill/stop
  void kill_hard(int i);          // SIGKILL, as a crash or power loss would; reaped
  int stop(int i, int timeout_ms = 30000);  // SIGTERM and wait: exit status (-1 if killed after the timeout)
  pid_t pid(int i) const { return nodes_.at(i).pid; }
  std::string log_path(int i) const;
  std::string log(int i) const;  // what the node's serve wrote so far

  // A client from the hub to node i's listener.
  std::unique_ptr<NetnsHttpClient> client(int i, int timeout_ms = 30000) const;

 private:
  struct Node {
    std::string netns, address;
    Serve serve;
    pid_t pid = -1;
  };
  ClusterNet() = default;
  Status build(const Options& options);

  std::string dir_;
  std::string prefix_;  // "10.A.B"
  std::string hub_, hub_address_;
  std::vector<std::string> made_;  // namespaces made so far, removed in reverse
  std::vector<Node> nodes_;
  std::unique_ptr<PostgresServer> postgres_;
};

// A /24 "10.A.B" of the 10/8 block that no address of this host (the caller's
// namespace, `ip -o addr`) is in, derived from `seed`; pure given `host_addrs`,
// the text `ip -o addr` printed.
std::string free_prefix(const std::string& host_addrs, unsigned seed);

}  // namespace airlock::testing
