#include "postgres_server.h"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "store/postgres.h"

namespace airlock::testing {

namespace {

// The newest installed server's bin directory, "" when there is none.
std::string find_bin() {
  glob_t g{};
  std::string best;
  if (::glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string p = g.gl_pathv[i];
      if (best.empty() || p > best) best = p;  // "15" > "13"; good enough for Debian's few versions
    }
  globfree(&g);
  return best.empty() ? "" : best.substr(0, best.size() - std::string("/initdb").size());
}

struct RunAs {
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  std::string netns;  // named network namespace to enter first, "" = stay
};

// As root: the postgres system user the Debian package makes, else nobody.
RunAs server_user() {
  RunAs r;
  if (::geteuid() != 0) return r;
  const passwd* pw = ::getpwnam("postgres");
  if (!pw) pw = ::getpwnam("nobody");
  if (pw) r = {pw->pw_uid, pw->pw_gid};
  return r;
}

// Forks and execs argv as `as`; the child dies with this process (PDEATHSIG),
// so a test process that crashes takes its server with it.
Result<pid_t> spawn(const std::vector<std::string>& argv, RunAs as, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return fail_errno("fork");
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    if (!as.netns.empty()) {  // before giving up root: setns needs CAP_SYS_ADMIN
      int ns = ::open(("/run/netns/" + as.netns).c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) ::_exit(125);
    }
    if (::geteuid() == 0 && as.uid != 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0) ::_exit(126);
    }
    ::setpgid(0, 0);  // the server and its backends: one group, for the fault tests' signals
    // After the uid change, which clears the parent-death signal (prctl(2)).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

Status run(const std::vector<std::string>& argv, RunAs as, const std::string& log) {
  auto pid = spawn(argv, as, log);
  if (!pid) return std::unexpected(pid.error());
  int status = 0;
  if (::waitpid(*pid, &status, 0) < 0) return fail_errno("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(argv[0] + " failed (status " + std::to_string(status) + "); see " + log);
  return {};
}

// A port on 127.0.0.1 that was free a moment ago.
Result<int> free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail_errno("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) < 0) {
    ::close(fd);
    return fail_errno("bind a loopback port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

Status chown_to(const std::string& path, RunAs as) {
  if (::geteuid() == 0 && ::chown(path.c_str(), as.uid, as.gid) < 0) return fail_errno("chown " + path);
  return {};
}

}  // namespace

Result<std::unique_ptr<PostgresServer>> PostgresServer::start(Options options) {
  std::string bin = find_bin();
  if (bin.empty()) return fail(ErrorKind::kNotFound, "no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql");
  std::unique_ptr<PostgresServer> s(new PostgresServer);
  s->bin_ = bin;
  std::string tmpl = std::filesystem::temp_directory_path() / "airlock-pg-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return fail_errno("mkdtemp");
  s->dir_ = tmpl;
  // 0711: the server's user passes through to its own directories, reads nothing else.
  if (::chmod(s->dir_.c_str(), 0711) < 0) return fail_errno("chmod " + s->dir_);
  RunAs as = server_user();
  std::string data = s->dir_ + "/data", sock = s->dir_ + "/sock", log = s->dir_ + "/log";
  for (const auto& d : {data, sock}) {
    if (::mkdir(d.c_str(), 0700) < 0) return fail_errno("mkdir " + d);
    AIRLOCK_TRY(chown_to(d, as));
  }
  int logfd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (logfd < 0) return fail_errno("create " + log);
  ::close(logfd);
  AIRLOCK_TRY(chown_to(log, as));
  AIRLOCK_TRY(run({bin + "/initdb", "-D", data, "-U", "airlock", "--auth=trust", "-E", "UTF8",
                   "--locale=C", "--no-sync", "--no-instructions"},
                  as, log));
  if (!options.trust_network.empty()) {
    // The network is the test's own (a namespace it made): no one else is on it.
    std::ofstream hba(data + "/pg_hba.conf", std::ios::app);
    hba << "host all all " << options.trust_network << " trust\n";
    if (!hba.flush()) return fail("append to " + data + "/pg_hba.conf");
  }
  auto port = free_port();  // of the host's loopback; in a namespace of the test's own, free too
  if (!port) return std::unexpected(port.error());
  s->port_ = *port;
  s->address_ = options.listen_address;
  s->sock_ = sock;
  as.netns = options.netns;
  std::vector<std::string> argv = {bin + "/postgres", "-D", data, "-h", s->address_,
                                   "-p", std::to_string(s->port_), "-k", sock,
                                   "-c", "max_connections=" + std::to_string(options.max_connections), "-c", "shared_buffers=32MB"};
  if (!options.durable) argv.insert(argv.end(), {"-c", "fsync=off", "-c", "synchronous_commit=off",
                                                 "-c", "full_page_writes=off"});
  s->argv_ = argv;
  s->uid_ = as.uid;
  s->gid_ = as.gid;
  s->netns_ = as.netns;
  s->log_ = log;
  if (auto st = s->start_again(); !st) return std::unexpected(st.error());
  return s;
}

Status PostgresServer::start_again() {
  if (pid_ > 0) return fail("postgres (pid " + std::to_string(pid_) + ") is running");
  RunAs as{uid_, gid_, netns_};
  auto pid = spawn(argv_, as, log_);
  if (!pid) return std::unexpected(pid.error());
  pid_ = *pid;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    if (auto c = store::open_postgres(local_url("postgres")); c) break;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return fail("postgres exited at start (status " + std::to_string(status) + "); see " + log_);
    }
    if (std::chrono::steady_clock::now() > deadline) return fail("postgres did not accept connections in 60 s; see " + log_);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

namespace {

// Waits for the postmaster `pid` to exit, then for the rest of its group.
Status reap_group(pid_t pid, int timeout_ms) {
  int status = 0;
  bool gone = false;
  for (int i = 0; i < timeout_ms / 20 && !gone; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) gone = true;
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!gone) return fail("postgres (pid " + std::to_string(pid) + ") did not exit");
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (::kill(-pid, 0) < 0 && errno == ESRCH) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fail("postgres's processes (group " + std::to_string(pid) + ") did not all exit");
}

}  // namespace

Status PostgresServer::stop() {
  if (pid_ <= 0) return fail("postgres is not running");
  if (::kill(pid_, SIGINT) < 0) return fail_errno("kill SIGINT postgres");
  pid_t pid = std::exchange(pid_, -1);
  return reap_group(pid, 30000);
}

Status PostgresServer::kill_hard() {
  if (pid_ <= 0) return fail("postgres is not running");
  if (::kill(-pid_, SIGKILL) < 0) return fail_errno("kill SIGKILL postgres's group");
  pid_t pid = std::exchange(pid_, -1);
  return reap_group(pid, 30000);
}

Status PostgresServer::pause() {
  if (pid_ <= 0) return fail("postgres is not running");
  if (::kill(-pid_, SIGSTOP) < 0) return fail_errno("kill SIGSTOP postgres's group");
  return {};
}

Status PostgresServer::resume() {
  if (pid_ <= 0) return fail("postgres is not running");
  if (::kill(-pid_, SIGCONT) < 0) return fail_errno("kill SIGCONT postgres's group");
  return {};
}

Status PostgresServer::cut_connections() {
  auto c = store::open_postgres(local_url("postgres"));
  if (!c) return std::unexpected(c.error());
  return (*c)->exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");
}

PostgresServer::~PostgresServer() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGCONT);  // a test that paused it and failed before resume()
    ::kill(pid_, SIGINT);  // fast shutdown: backends end, the postmaster exits last
    int status = 0;
    bool gone = false;
    for (int i = 0; i < 600 && !gone; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) gone = true;
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!gone) {
      ADD_FAILURE() << "postgres (pid " << pid_ << ") ignored SIGINT for 30 s: killed";
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql://airlock@" + address_ + ":" + std::to_string(port_) + "/" + database;
}

std::string PostgresServer::local_url(const std::string& database) const {
  // libpq: a host that is a directory names the socket's directory; the port names the socket file.
  return "postgresql://airlock@/" + database + "?host=" + sock_ + "&port=" + std::to_string(port_);
}

std::unique_ptr<PostgresServer> PostgresServer::attach(int port) {
  std::unique_ptr<PostgresServer> s(new PostgresServer);
  s->port_ = port;  // pid_ -1 and dir_ empty: the destructor stops and removes nothing
  return s;
}

Result<std::string> PostgresServer::create_database() {
  // An attached fixture server has no socket directory of ours: its TCP address.
  auto c = store::open_postgres(sock_.empty() ? url("postgres") : local_url("postgres"));
  if (!c) return std::unexpected(c.error());
  // Many test processes share the fixture's server: a random tag per process
  // keeps their names apart (a pid can come back within one run).
  static const std::string tag = [] {
    unsigned long long r = 0;
    if (::getrandom(&r, sizeof r, 0) != sizeof r) r = static_cast<unsigned long long>(::getpid());
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", r);
    return std::string(hex);
  }();
  std::string name = "airlock_test_" + tag + "_" + std::to_string(++next_db_);
  // The name is our own constant shape: no value from outside reaches this SQL.
  AIRLOCK_TRY((*c)->exec(("CREATE DATABASE " + name).c_str()));
  return url(name);
}

Result<SharedServerLine> parse_shared_server_file(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  SharedServerLine out;
  if (line.starts_with("skip: ") && line.size() > 6) {
    out.skip = line.substr(6);
    return out;
  }
  const std::string prefix = "postgresql://airlock@127.0.0.1:";
  if (!line.starts_with(prefix)) return fail("not a fixture server line: " + line);
  const char* begin = line.data() + prefix.size();
  const char* end = line.data() + line.size();
  auto [p, ec] = std::from_chars(begin, end, out.port);
  if (ec != std::errc() || p != end || begin == end || out.port < 1 || out.port > 65535)
    return fail("not a port in the fixture server line: " + line);
  return out;
}

std::string shared_server_file_text(int port) {
  return "postgresql://airlock@127.0.0.1:" + std::to_string(port) + "\n";
}

namespace {

// The fixture's server when its file exists; else one of this process's own.
Result<std::unique_ptr<PostgresServer>> find_shared_server() {
  const char* file = std::getenv(kSharedServerFileEnv);
  if (!file || !*file || !std::filesystem::exists(file)) return PostgresServer::start();
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return fail("read " + std::string(file));
  auto line = parse_shared_server_file(text.str());
  if (!line) return fail(std::string(file) + ": " + line.error().message());
  if (!line->skip.empty()) return fail(ErrorKind::kNotFound, line->skip);
  return PostgresServer::attach(line->port);
}

class SharedPostgres : public ::testing::Environment {
 public:
  PostgresServer* get(std::string* why) {
    if (!tried_) {
      tried_ = true;
      auto s = find_shared_server();
      if (s) {
        server_ = std::move(*s);
      } else {
        why_ = s.error().message();
        // Only a host without the server binaries skips; a server that is
        // installed and does not start (or a bad fixture file) fails the test.
        if (s.error().kind != ErrorKind::kNotFound) ADD_FAILURE() << why_;
      }
    }
    if (why) *why = why_;
    return server_.get();
  }
  void TearDown() override { server_.reset(); }

 private:
  bool tried_ = false;
  std::unique_ptr<PostgresServer> server_;
  std::string why_;
};

SharedPostgres* shared_env() {
  static SharedPostgres* env = static_cast<SharedPostgres*>(::testing::AddGlobalTestEnvironment(new SharedPostgres));
  return env;
}

}  // namespace

PostgresServer* shared_postgres(std::string* why) { return shared_env()->get(why); }

}  // namespace airlock::testing
