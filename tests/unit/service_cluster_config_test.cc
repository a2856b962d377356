// The cluster keys of airlock serve's configuration (service/config.h):
// role, node_id, node_address, node_lease_ms, heartbeat_ms, content_dir.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service/config.h"

using namespace airlock::service;

namespace {

ServiceConfig parsed(const std::string& toml) {
  auto c = parse_config(toml);
  EXPECT_TRUE(c) << (c ? "" : c.error().message());
  return c ? *c : ServiceConfig{};
}

std::string error_of(const std::vector<std::string>& args) {
  auto c = config_from_args(args);
  return c ? "" : c.error().message();
}

TEST(ClusterConfig, DefaultsAreOneMachine) {
  ServiceConfig c;
  ASSERT_TRUE(finish_cluster_config(c, "box1"));
  EXPECT_EQ(c.role, Role::kAll);
  EXPECT_FALSE(cluster_mode(c));
  EXPECT_EQ(c.node_id, "box1");
  EXPECT_EQ(c.node_address, "127.0.0.1:8470");
  EXPECT_EQ(c.node_lease_ms, 10'000u);
  EXPECT_EQ(c.heartbeat_ms, 1'000u);
  // Role all keeps today's layout: uploads, artifacts and the spool in data_dir.
  EXPECT_EQ(content_dir(c), c.data_dir);
  EXPECT_EQ(node_dir(c), c.data_dir);
}

TEST(ClusterConfig, FileKeysAndFlags) {
  auto c = parsed("role = \"worker\"\nnode_id = \"w-1\"\nnode_address = \"10.0.0.5:8471\"\n"
                  "node_lease_ms = 3000\nheartbeat_ms = 200\ncontent_dir = \"/srv/content\"\n"
                  "data_dir = \"/var/lib/x\"\n");
  EXPECT_EQ(c.role, Role::kWorker);
  EXPECT_EQ(c.node_id, "w-1");
  EXPECT_EQ(c.node_address, "10.0.0.5:8471");
  EXPECT_EQ(c.node_lease_ms, 3000u);
  EXPECT_EQ(c.heartbeat_ms, 200u);
  EXPECT_EQ(content_dir(c), "/srv/content");
  EXPECT_EQ(node_dir(c), "/var/lib/x/nodes/w-1");

  auto f = config_from_args({"--role", "api", "--node-id", "api-0", "--listen", "127.0.0.1:9000",
                             "--content-dir", "/c"});
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ(f->role, Role::kApi);
  EXPECT_TRUE(cluster_mode(*f));
  EXPECT_EQ(f->node_id, "api-0");
  EXPECT_EQ(f->node_address, "127.0.0.1:9000");  // default: the listen address
  EXPECT_EQ(f->content_dir, "/c");
}

TEST(ClusterConfig, UnknownRoleIsRefusedNamingTheChoices) {
  EXPECT_EQ(error_of({"--role", "foo"}), "--role: role 'foo': must be api, worker or all");
  auto c = parse_config("role = \"master\"\n");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message(), "configuration: role 'master': must be api, worker or all");
  EXPECT_NE(error_of({"--role"}).find("needs a value"), std::string::npos);
}

TEST(ClusterConfig, NodeIdMustBeAPlainName) {
  // It becomes a directory (data_dir/nodes/ID) and a metric label.
  for (const char* bad : {"../x", "a/b", ".hidden", "-x", "a b", "x\"y", "n\nid"}) {
    ServiceConfig c;
    c.node_id = bad;
    auto st = finish_cluster_config(c, "box");
    ASSERT_FALSE(st) << bad;
    EXPECT_NE(st.error().message().find("node_id"), std::string::npos) << bad;
  }
  ServiceConfig c;
  c.node_id = std::string(64, 'a');
  EXPECT_FALSE(finish_cluster_config(c, "box"));
  // A host name that is no plain name says where the id came from.
  ServiceConfig h;
  auto st = finish_cluster_config(h, "");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("host name"), std::string::npos);
}

TEST(ClusterConfig, LeaseMustOutlastTwoHeartbeats) {
  ServiceConfig c;
  c.heartbeat_ms = 1000;
  c.node_lease_ms = 1999;
  auto st = finish_cluster_config(c, "box");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message(), "node_lease_ms (1999) must be at least twice heartbeat_ms (1000)");
  c.node_lease_ms = 2000;
  EXPECT_TRUE(finish_cluster_config(c, "box"));
  c.heartbeat_ms = 5;
  EXPECT_FALSE(finish_cluster_config(c, "box"));
  c.heartbeat_ms = 100;
  c.node_lease_ms = 3'600'001;
  EXPECT_FALSE(finish_cluster_config(c, "box"));
}

TEST(ClusterConfig, NodeAddress) {
  // Port 0 is fine on one machine, but other nodes could not reach a cluster node.
  EXPECT_TRUE(config_from_args({"--listen", "127.0.0.1:0", "--node-id", "n"}));
  EXPECT_NE(error_of({"--listen", "127.0.0.1:0", "--role", "worker", "--node-id", "n"}).find("node_address"),
            std::string::npos);
  auto c = config_from_args({"--listen", "127.0.0.1:0", "--role", "worker", "--node-id", "n", "--node-address",
                             "127.0.0.2:9001"});
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->node_address, "127.0.0.2:9001");
  for (const char* bad : {"nohost", ":80", "h:", "h:99999", "h:8x"})
    EXPECT_NE(error_of({"--node-id", "n", "--node-address", bad}).find("HOST:PORT"), std::string::npos) << bad;
  // Listening on every address: the others reach this node by its host name.
  ServiceConfig any;
  any.role = Role::kWorker;
  any.listen_address = "0.0.0.0";
  any.listen_port = 8471;
  ASSERT_TRUE(finish_cluster_config(any, "worker-7"));
  EXPECT_EQ(any.node_address, "worker-7:8471");
}

TEST(ClusterConfig, RoleNames) {
  for (Role r : {Role::kAll, Role::kApi, Role::kWorker}) EXPECT_EQ(parse_role(role_name(r)), r);
  EXPECT_FALSE(parse_role("API"));
  EXPECT_FALSE(parse_role(""));
}

}  // namespace
