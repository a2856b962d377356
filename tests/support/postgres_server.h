// A real PostgreSQL server for tests: initdb into a temporary directory, the
// server started on a free loopback port (or an address of a network
// namespace the test made) with its socket in that directory,
// a fresh database per test, and all of it stopped (by pid) and removed when
// the server object goes. As root the server runs as the `postgres` system
// user (or nobody): PostgreSQL refuses to run as root.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace airlock::testing {

class PostgresServer {
 public:
  struct Options {
    // fsync and synchronous_commit on (the benchmark compares durable commits);
    // tests run with fsync off, which only weakens durability against a power loss.
    bool durable = false;
    // The TCP address it listens on, and the named network namespace
    // (/run/netns/NAME) it runs in: "" = the caller's. The test process itself
    // talks to it over its unix socket, which no network namespace hides.
    std::string listen_address = "127.0.0.1";
    std::string netns;
    // Clients of this network (CIDR, e.g. "10.1.2.0/24") are trusted as on
    // loopback; "" = loopback and the unix socket only, initdb's default.
    std::string trust_network;
    int max_connections = 40;  // a cluster of nodes, each with its pool and listener, needs more
  };
  // Fails (kNotFound) when no /usr/lib/postgresql/*/bin/initdb exists.
  static Result<std::unique_ptr<PostgresServer>> start(Options options);
  static Result<std::unique_ptr<PostgresServer>> start() { return start(Options{}); }
  // A server another process started and stops (the ctest fixture,
  // tests/postgres_fixture): this object makes databases on it and owns nothing.
  static std::unique_ptr<PostgresServer> attach(int port);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Creates a new, empty database and returns its postgresql:// URL (TCP, on
  // the listen address).
  Result<std::string> create_database();
  std::string url(const std::string& database) const;
  // The same database over the unix socket: for the test process when the
  // server runs in a network namespace it cannot reach over TCP.
  std::string local_url(const std::string& database) const;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // Faults, for the store-fault tests (a server this object started; its
  // processes are one process group). stop(): a fast shutdown (clients see
  // the server close their connections); kill_hard(): SIGKILL of every
  // server process (a crash); pause()/resume(): SIGSTOP/SIGCONT of all of
  // them (a server that hangs: connections stay open, nothing answers);
  // start_again(): the same data directory and port, until it accepts
  // connections (the server gets a parent-death signal, which follows the
  // thread that forked it: call it from a thread that lives as long as the
  // server should); cut_connections(): every client connection ended by the
  // server (pg_terminate_backend), the server itself stays up.
  Status stop();
  Status kill_hard();
  Status pause();
  Status resume();
  Status start_again();
  Status cut_connections();
  const std::string& dir() const { return dir_; }

 private:
  PostgresServer() = default;
  std::string dir_;  // removed at the end
  std::string bin_;
  std::string address_ = "127.0.0.1";
  std::string sock_;  // the unix socket's directory
  int port_ = 0;
  pid_t pid_ = -1;
  int next_db_ = 0;
  // How it was started, to start it again.
  std::vector<std::string> argv_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string netns_, log_;
};

// The file the ctest fixture writes (tests/postgres_fixture): the first line is
// the server's URL, postgresql://airlock@127.0.0.1:PORT, or "skip: why" when no
// server can run here. Pure: `port` or `skip` set, or an error for any other text.
struct SharedServerLine {
  int port = 0;
  std::string skip;
};
Result<SharedServerLine> parse_shared_server_file(const std::string& text);
std::string shared_server_file_text(int port);

// The environment variable that names that file (set by tests/CMakeLists.txt
// on the tests that require the fixture).
inline constexpr const char* kSharedServerFileEnv = "AIRLOCK_TEST_POSTGRES_FILE";

// One server per test process, asked for by the first test that needs it: the
// fixture's server when $AIRLOCK_TEST_POSTGRES_FILE names a file that exists,
// else one this process starts and stops when it exits (a gtest environment's
// TearDown), so a test binary run alone still works. nullptr with `why` set
// when there is none (no server binaries installed, or the fixture said skip).
PostgresServer* shared_postgres(std::string* why);

}  // namespace airlock::testing
