#include "service_fixture.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "store/store.h"
#include "support/serve_launch.h"

namespace airlock::testing {
namespace {

TestKey make_key(store::Store& s, const std::string& tenant_id, const std::string& tenant,
                 const std::set<std::string>& scopes) {
  auto key = s.create_key(tenant_id, "test", scopes);
  if (!key) throw std::runtime_error("create key: " + key.error().message());
  return {tenant, key->second, key->first.id};
}

}  // namespace

ServiceProcess::ServiceProcess(std::vector<std::string> extra_args, std::vector<std::string> launcher,
                               std::string data_dir)
    : data_(data_dir.empty() ? dir_.sub("data") : std::move(data_dir)),
      state_(dir_.state()),
      extra_(std::move(extra_args)),
      launcher_(std::move(launcher)) {
  // With --database-url among the arguments, the tenants go where the daemon keeps its rows.
  store::StoreOptions options = store::StoreOptions::defaults();
  for (size_t i = 0; i + 1 < extra_.size(); ++i)
    if (extra_[i] == "--database-url") options.database_url = extra_[i + 1];
  auto s = store::Store::open(data_, options);
  if (!s) throw std::runtime_error("open store: " + s.error().message());
  store::TenantLimits limits;
  limits.max_running = 4;
  limits.max_queued = 64;
  auto a = (*s)->create_tenant("alpha", limits);
  auto b = (*s)->create_tenant("beta", limits);
  auto g = (*s)->create_tenant("gamma", limits);
  if (!a || !b || !g) throw std::runtime_error("create tenants");
  alpha = make_key(**s, a->id, "alpha", {"run", "read", "publish"});
  alpha_reader = make_key(**s, a->id, "alpha", {"read"});
  alpha_admin = make_key(**s, a->id, "alpha", {"admin"});
  alpha_operator = make_key(**s, a->id, "alpha", {"admin", "run", "read"});
  beta = make_key(**s, b->id, "beta", {"run", "read", "publish"});
  gamma = make_key(**s, g->id, "gamma", {"run", "read", "publish"});
  start();
}

void ServiceProcess::start() {
  std::vector<std::string> args = {AIRLOCK_BINARY, "serve", "--listen", "127.0.0.1:0", "--data-dir", data_,
                                   "--state-dir", state_};
  args.insert(args.end(), extra_.begin(), extra_.end());
  args.insert(args.begin(), launcher_.begin(), launcher_.end());
  LaunchedServe serve = launch_serve(args, dir_.sub("serve.log"), O_APPEND, 0644);
  pid_ = serve.pid;
  if (serve.pid < 0) throw std::runtime_error("start airlock serve");
  if (serve.port == 0) throw std::runtime_error("serve did not start: " + serve.first_line + "\n" + this->log());
  port_ = serve.port;
  ++start_count_;
}

void ServiceProcess::kill_hard() {
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int ServiceProcess::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 300; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_hard();
  return -1;
}

ServiceProcess::~ServiceProcess() {
  stop();
  run_airlock({"sweep", "--state-dir", state_});
  std::error_code ec;
  std::filesystem::remove_all(default_work_dir(data_), ec);  // what a killed serve left there
}

std::string ServiceProcess::log() const { return read_text(dir_.sub("serve.log")); }

nlohmann::json run_job(HttpClient& c, const TestKey& key, const nlohmann::json& body, int wait_s) {
  nlohmann::json b = body;
  b["wait_s"] = wait_s;
  auto r = c.request("POST", "/v1/jobs", b.dump(), key.auth());
  if (r.status != 201 && r.status != 200) throw std::runtime_error("create job: " + std::to_string(r.status) + " " + r.body);
  return r.json();
}

std::string upload(HttpClient& c, const TestKey& key, const std::string& name, const std::string& content) {
  auto r = c.request("POST", "/v1/files?name=" + name, content, key.auth());
  EXPECT_EQ(r.status, 201) << r.body;
  return r.status == 201 ? r.json()["id"].get<std::string>() : "";
}

}  // namespace airlock::testing
