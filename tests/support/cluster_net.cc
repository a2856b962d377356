#include "support/cluster_net.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "base/unique_fd.h"
#include "support/serve_launch.h"

namespace airlock::testing {

namespace {

// Runs `ip ARGS...` to completion, stderr appended to `log`.
Status ip(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {"/usr/sbin/ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string text;
  for (const auto& a : argv) text += (text.empty() ? "" : " ") + a;
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork for " + text);
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> v;
    for (auto& a : argv) v.push_back(a.data());
    v.push_back(nullptr);
    ::execv(v[0], v.data());
    ::_exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) return fail_errno("waitpid " + text);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(text + " failed (status " + std::to_string(status) + "); see " + log);
  return {};
}

std::string command_output(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  ::pclose(p);
  return out;
}

bool wait_exit(pid_t pid, int timeout_ms, int* status) {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    if (::waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

Status in_netns(const std::string& netns, const std::function<void()>& fn) {
  UniqueFd ns(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return fail_errno("open /run/netns/" + netns);
  Status out;
  std::thread([&] {
    if (::setns(ns.get(), CLONE_NEWNET) < 0) {
      out = fail_errno("enter network namespace " + netns);
      return;
    }
    fn();
  }).join();  // the thread, and its hold on the namespace, end here
  return out;
}

std::string free_prefix(const std::string& host_addrs, unsigned seed) {
  for (unsigned attempt = 0; attempt < 65536; ++attempt) {
    unsigned n = (seed + attempt * 7919u) % (200u * 256u);
    std::string prefix = "10." + std::to_string(50 + n / 256) + "." + std::to_string(n % 256);
    // `ip -o addr` prints "inet 10.A.B.C/NN"; a host address in the /24, or a
    // wider host network that contains it (10.0.0.0/8 and the like), collides.
    bool taken = host_addrs.find("inet " + prefix + ".") != std::string::npos;
    std::istringstream in(host_addrs);
    for (std::string word; !taken && in >> word;) {
      if (word != "inet" || !(in >> word)) continue;
      auto slash = word.find('/');
      if (slash == std::string::npos || word.rfind("10.", 0) != 0) continue;
      int bits = std::stoi(word.substr(slash + 1));
      if (bits < 24) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (std::sscanf(word.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4) continue;
        uint32_t net = (a << 24) | (b << 16) | (c << 8) | d;
        uint32_t mine = (10u << 24) | ((50 + n / 256) << 16) | ((n % 256) << 8);
        uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
        taken = (net & mask) == (mine & mask);
      }
    }
    if (!taken) return prefix;
  }
  return "";
}

// --- NetnsHttpClient ---------------------------------------------------------

NetnsHttpClient::NetnsHttpClient(std::string netns, std::string host, uint16_t port, int timeout_ms) {
  thread_ = std::thread(&NetnsHttpClient::loop, this, std::move(netns), std::move(host), port, timeout_ms);
}

NetnsHttpClient::~NetnsHttpClient() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void NetnsHttpClient::loop(std::string netns, std::string host, uint16_t port, int timeout_ms) {
  std::unique_ptr<HttpClient> client;
  std::string why;
  UniqueFd ns(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) why = "open /run/netns/" + netns + " failed";
  else if (::setns(ns.get(), CLONE_NEWNET) < 0) why = "could not enter network namespace " + netns;
  else client = std::make_unique<HttpClient>(host, port, timeout_ms);
  ns.reset();
  while (true) {
    std::function<void(HttpClient*)> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task(client.get());  // nullptr: the namespace could not be entered
  }
}

Response NetnsHttpClient::request(const std::string& method, const std::string& target, const std::string& body,
                                  const std::map<std::string, std::string>& headers) {
  std::promise<Response> done;
  auto answer = done.get_future();
  {
    std::lock_guard lock(mu_);
    tasks_.push_back([&](HttpClient* c) {
      if (!c) done.set_value(Response{.error = "the client's thread is outside the network namespace"});
      else done.set_value(c->request(method, target, body, headers));
    });
  }
  cv_.notify_all();
  return answer.get();
}

// --- ClusterNet --------------------------------------------------------------

Result<std::unique_ptr<ClusterNet>> ClusterNet::create(Options options) {
  std::unique_ptr<ClusterNet> net(new ClusterNet);
  // On failure half-way, the destructor removes what was made.
  if (auto st = net->build(options); !st) return std::unexpected(st.error());
  return net;
}

Status ClusterNet::build(const Options& options) {
  std::string tmpl = std::filesystem::temp_directory_path() / "airlock-cluster-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return fail_errno("mkdtemp");
  dir_ = tmpl;
  if (::chmod(dir_.c_str(), 0711) < 0) return fail_errno("chmod " + dir_);
  std::string log = dir_ + "/ip.log";

  prefix_ = free_prefix(command_output("/usr/sbin/ip -o addr 2>/dev/null"), static_cast<unsigned>(::getpid()));
  if (prefix_.empty()) return fail("no free 10.x.y.0/24 for the cluster's bridge");
  std::string tag = "airlock-cl" + std::to_string(::getpid());
  hub_ = tag + "-hub";
  hub_address_ = prefix_ + ".1";

  AIRLOCK_TRY(ip({"netns", "add", hub_}, log));
  made_.push_back(hub_);
  AIRLOCK_TRY(ip({"-n", hub_, "link", "set", "lo", "up"}, log));
  // The bridge lives inside the hub: its name is the hub's own, and it goes with the hub.
  AIRLOCK_TRY(ip({"-n", hub_, "link", "add", "br0", "type", "bridge"}, log));
  AIRLOCK_TRY(ip({"-n", hub_, "addr", "add", hub_address_ + "/24", "dev", "br0"}, log));
  AIRLOCK_TRY(ip({"-n", hub_, "link", "set", "br0", "up"}, log));

  for (int i = 0; i < options.nodes; ++i) {
    Node n;
    n.netns = tag + "-n" + std::to_string(i);
    n.address = prefix_ + "." + std::to_string(11 + i);
    AIRLOCK_TRY(ip({"netns", "add", n.netns}, log));
    made_.push_back(n.netns);
    std::string port = "n" + std::to_string(i);
    AIRLOCK_TRY(ip({"-n", hub_, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", n.netns}, log));
    AIRLOCK_TRY(ip({"-n", hub_, "link", "set", port, "master", "br0"}, log));
    AIRLOCK_TRY(ip({"-n", hub_, "link", "set", port, "up"}, log));
    AIRLOCK_TRY(ip({"-n", n.netns, "addr", "add", n.address + "/24", "dev", "eth0"}, log));
    AIRLOCK_TRY(ip({"-n", n.netns, "link", "set", "eth0", "up"}, log));
    AIRLOCK_TRY(ip({"-n", n.netns, "link", "set", "lo", "up"}, log));
    nodes_.push_back(std::move(n));
  }

  if (options.postgres) {
    PostgresServer::Options o;
    o.durable = options.durable_postgres;
    o.listen_address = hub_address_;
    o.netns = hub_;
    o.max_connections = 200;
    o.trust_network = prefix_ + ".0/24";
    auto pg = PostgresServer::start(o);
    if (!pg) return std::unexpected(pg.error());
    postgres_ = std::move(*pg);
  }
  return {};
}

ClusterNet::~ClusterNet() {
  for (int i = 0; i < nodes(); ++i) {
    Node& n = nodes_[i];
    if (n.pid <= 0) continue;
    stop(i, 10000);  // SIGTERM first: a draining node hands back what it has
    if (!n.serve.state_dir.empty()) {
      // What a killed serve left (cgroups, job directories), as an operator's `airlock sweep` would.
      pid_t pid = ::fork();
      if (pid == 0) {
        int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execl(n.serve.argv[0].c_str(), n.serve.argv[0].c_str(), "sweep", "--state-dir", n.serve.state_dir.c_str(),
                nullptr);
        ::_exit(127);
      }
      if (pid > 0) ::waitpid(pid, nullptr, 0);
    }
  }
  postgres_.reset();  // stopped by pid before its namespace goes
  std::string log = dir_.empty() ? "/dev/null" : dir_ + "/ip.log";
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) (void)ip({"netns", "del", *it}, log);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::vector<std::string> ClusterNet::namespaces() const { return made_; }

Result<ClusterNet::Database> ClusterNet::create_database() {
  if (!postgres_) return fail("the cluster was made without PostgreSQL");
  auto url = postgres_->create_database();
  if (!url) return std::unexpected(url.error());
  std::string name = url->substr(url->rfind('/') + 1);
  return Database{*url, postgres_->local_url(name)};
}

std::string ClusterNet::log_path(int i) const { return dir_ + "/node" + std::to_string(i) + ".log"; }

std::string ClusterNet::log(int i) const {
  std::ifstream in(log_path(i));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Status ClusterNet::start(int i, Serve serve) {
  Node& n = nodes_.at(i);
  if (n.pid > 0) return fail("node " + std::to_string(i) + " is running (pid " + std::to_string(n.pid) + ")");
  n.serve = std::move(serve);
  return restart(i);
}

Status ClusterNet::restart(int i) {
  Node& n = nodes_.at(i);
  if (n.pid > 0) return fail("node " + std::to_string(i) + " is running (pid " + std::to_string(n.pid) + ")");
  if (n.serve.argv.empty()) return fail("node " + std::to_string(i) + " was never started");
  LaunchedServe s = launch_serve(n.serve.argv, log_path(i), O_APPEND, 0600, n.netns);
  if (s.pid < 0) return fail("fork airlock serve for node " + std::to_string(i));
  n.pid = s.pid;
  if (s.port == 0) return fail("node " + std::to_string(i) + " did not start: '" + s.first_line + "'; log:\n" + log(i));
  return {};
}

void ClusterNet::kill_hard(int i) {
  Node& n = nodes_.at(i);
  if (n.pid <= 0) return;
  ::kill(n.pid, SIGKILL);
  ::waitpid(n.pid, nullptr, 0);
  n.pid = -1;
}

int ClusterNet::stop(int i, int timeout_ms) {
  Node& n = nodes_.at(i);
  if (n.pid <= 0) return -1;
  ::kill(n.pid, SIGTERM);
  int status = 0;
  if (!wait_exit(n.pid, timeout_ms, &status)) {
    kill_hard(i);
    return -1;
  }
  n.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::unique_ptr<NetnsHttpClient> ClusterNet::client(int i, int timeout_ms) const {
  return std::make_unique<NetnsHttpClient>(hub_, node_address(i), kNodePort, timeout_ms);
}

}  // namespace airlock::testing
