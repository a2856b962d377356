// A real `airlock serve` on a free loopback port, with its own data and state
// directories and two tenants' API keys, for tests that talk HTTP to it.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/http_client.h"
#include "run_helpers.h"

namespace airlock::testing {

struct TestKey {
  std::string tenant, secret, key_id;
  std::map<std::string, std::string> auth() const { return {{"authorization", "Bearer " + secret}}; }
};

class ServiceProcess {
 public:
  // Creates tenants "alpha", "beta" and "gamma" with keys (all scopes except
  // admin for "full"; read only for "reader"), then starts the daemon.
  // `launcher` comes before the airlock command line and must exec it in the
  // same process (e.g. {"/usr/bin/prlimit", "--nofile=256:256", "--"}). The
  // data directory is `data_dir` when given (e.g. a filesystem the test mounted).
  explicit ServiceProcess(std::vector<std::string> extra_args = {}, std::vector<std::string> launcher = {},
                          std::string data_dir = "");
  ~ServiceProcess();  // SIGTERM, wait; SIGKILL if it hangs; sweep; remove dirs

  void start();        // (again, after kill()) same data directory
  void kill_hard();    // SIGKILL, as a crash would
  int stop();          // SIGTERM and wait; exit status
  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  HttpClient client() const { return HttpClient(port_); }
  const std::string& data_dir() const { return data_; }
  const std::string& state_dir() const { return state_; }
  std::string log() const;  // the daemon's stderr so far

  TestKey alpha, alpha_reader, alpha_admin, beta, gamma;
  TestKey alpha_operator;  // admin, run and read: reads every tenant, acts on its own

 private:
  TempDir dir_;
  std::string data_, state_;
  std::vector<std::string> extra_, launcher_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  int start_count_ = 0;
};

// POST /v1/files?name=NAME with `content` as `key`; the file's id, or "" (a
// failed expectation) when the service did not answer 201.
std::string upload(HttpClient& c, const TestKey& key, const std::string& name, const std::string& content);

// POST /v1/jobs with wait; the job's view when it ended (or the response).
nlohmann::json run_job(HttpClient& c, const TestKey& key, const nlohmann::json& body, int wait_s = 60);

}  // namespace airlock::testing
