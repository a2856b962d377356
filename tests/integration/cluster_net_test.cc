// The many-machines harness itself (tests/support/cluster_net.h): PostgreSQL
// on the hub is reachable from every node's namespace, the nodes reach each
// other over the bridge and nothing else in it, an `airlock serve` in a node
// answers the hub and keeps its rows in that server, and nothing of it is left
// on the host afterwards.
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <gtest/gtest.h>

#include "run_helpers.h"
#include "store/postgres.h"
#include "store/store.h"
#include "support/cluster_net.h"
#include "sys/netns.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

std::string output_of(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[512];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) ::pclose(p);
  return out;
}

// The host's links without their counters and flags that change on their own.
std::string host_links() { return output_of("ip -o link show | awk '{print $2}'"); }

airlock::Result<airlock::UniqueFd> connect_from(const std::string& netns, const std::string& address, uint16_t port,
                                                int timeout_ms = 3000) {
  airlock::UniqueFd ns(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns) return airlock::fail_errno("open /run/netns/" + netns);
  return airlock::sys::connect_in_netns(ns.get(), address, port, timeout_ms);
}

bool alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH); }

}  // namespace

TEST(ClusterNet, PostgresAndNodesReachEachOtherAServeAnswersTheHubAndNothingIsLeft) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  std::string links_before = host_links();
  std::string netns_before = output_of("ip netns list");
  std::vector<std::string> made;
  std::string dir, pg_dir;
  pid_t pg_pid = -1, serve_pid = -1;
  {
    auto net = ClusterNet::create({.nodes = 3});
    if (!net && net.error().kind == airlock::ErrorKind::kNotFound) GTEST_SKIP() << net.error().message();
    ASSERT_TRUE(net) << net.error().message();
    ClusterNet& c = **net;
    made = c.namespaces();
    dir = c.dir();
    ASSERT_EQ(made.size(), 4u);
    ASSERT_NE(c.postgres(), nullptr);
    pg_pid = c.postgres()->pid();
    pg_dir = c.postgres()->dir();
    // The bridge's /24 is no network of the host's.
    std::string prefix = c.hub_address().substr(0, c.hub_address().rfind('.') + 1);
    EXPECT_EQ(output_of("ip -o addr").find("inet " + prefix), std::string::npos);

    auto db = c.create_database();
    ASSERT_TRUE(db) << db.error().message();
    EXPECT_NE(db->url.find(c.hub_address()), std::string::npos) << db->url;

    for (int i = 0; i < c.nodes(); ++i) {
      // TCP to the server from the node's namespace, and a real query through libpq there.
      auto fd = connect_from(c.node_netns(i), c.hub_address(), static_cast<uint16_t>(c.postgres()->port()));
      EXPECT_TRUE(fd) << "node " << i << ": " << fd.error().message();
      std::string answer;
      ASSERT_TRUE(in_netns(c.node_netns(i), [&] {
        auto conn = airlock::store::open_postgres(db->url);
        if (!conn) {
          answer = conn.error().message();
          return;
        }
        auto s = (*conn)->prepare("SELECT 40 + " + std::to_string(i));
        if (s && s->step().value_or(false)) answer = s->text(0);
      }));
      EXPECT_EQ(answer, std::to_string(40 + i)) << "node " << i;
    }

    // Each node listens on its own address; every other node connects to it.
    std::vector<airlock::UniqueFd> listeners;
    for (int j = 0; j < c.nodes(); ++j) {
      airlock::UniqueFd l;
      ASSERT_TRUE(in_netns(c.node_netns(j), [&] {
        l.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(9000);
        ::inet_pton(AF_INET, c.node_address(j).c_str(), &a.sin_addr);
        if (::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l.get(), 8) != 0) l.reset();
      }));
      ASSERT_TRUE(l) << "listen in node " << j;
      listeners.push_back(std::move(l));
    }
    for (int i = 0; i < c.nodes(); ++i)
      for (int j = 0; j < c.nodes(); ++j) {
        if (i == j) continue;
        auto fd = connect_from(c.node_netns(i), c.node_address(j), 9000);
        EXPECT_TRUE(fd) << "node " << i << " -> node " << j << ": " << fd.error().message();
      }
    // An address of the /24 that nobody holds answers nothing: the connects
    // above reached the nodes themselves, not whatever answers any address.
    auto nobody = connect_from(c.node_netns(0), prefix + "250", 9000, 1500);
    EXPECT_FALSE(nobody);

    // A serve in node 1 (role all, its rows in the hub's PostgreSQL), asked from the hub.
    TempDir tmp;
    std::string data = tmp.sub("data"), state = tmp.state();
    std::string secret, tenant_id;
    {
      auto s = airlock::store::Store::open(data, {.database_url = db->local_url});
      ASSERT_TRUE(s) << s.error().message();
      auto t = (*s)->create_tenant("alpha", {});
      ASSERT_TRUE(t);
      tenant_id = t->id;
      auto key = (*s)->create_key(t->id, "test", {"run", "read"});
      ASSERT_TRUE(key);
      secret = key->second;
    }
    auto st = c.start(1, {{AIRLOCK_BINARY, "serve", "--listen", c.node_listen(1), "--data-dir", data, "--state-dir",
                           state, "--database-url", db->url},
                          state});
    ASSERT_TRUE(st) << st.error().message();
    serve_pid = c.pid(1);
    auto http = c.client(1);
    auto health = http->request("GET", "/healthz");
    EXPECT_EQ(health.status, 200) << health.error << health.body;
    json body = {{"command", {"sh", "-c", "echo from-node-1"}}, {"wait_s", 60}};
    auto job = http->request("POST", "/v1/jobs", body.dump(), {{"authorization", "Bearer " + secret}});
    ASSERT_TRUE(job.status == 201 || job.status == 200) << job.status << " " << job.error << job.body;
    EXPECT_EQ(job.json()["outcome"], "succeeded") << job.body;
    // The row is in the hub's server, read over its unix socket from the host.
    auto s = airlock::store::Store::open(data, {.database_url = db->local_url});
    ASSERT_TRUE(s);
    auto row = (*s)->job(tenant_id, job.json()["id"].get<std::string>());
    ASSERT_TRUE(row && *row) << "the job's row is not in PostgreSQL";
    EXPECT_EQ((*row)->state, airlock::store::JobState::kFinished);
    // (the ClusterNet goes here, with a serve still running: the harness must stop it)
  }
  EXPECT_FALSE(alive(serve_pid)) << "serve " << serve_pid << " outlived the harness";
  EXPECT_FALSE(alive(pg_pid)) << "postgres " << pg_pid << " outlived the harness";
  std::string netns_after = output_of("ip netns list");
  for (const auto& ns : made) EXPECT_EQ(netns_after.find(ns), std::string::npos) << ns << " was left";
  EXPECT_EQ(netns_after, netns_before);
  EXPECT_EQ(host_links(), links_before);
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_FALSE(std::filesystem::exists(pg_dir)) << pg_dir;
}
