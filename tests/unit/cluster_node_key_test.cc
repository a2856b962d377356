// The node key (cluster/node_key.h, cluster/node_gate.h): how it is set,
// how it is compared, and the worker's gate, attacked the ways a client
// without the key would try.
#include "cluster/node_gate.h"
#include "cluster/node_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "service/config.h"

namespace airlock::cluster {
namespace {

namespace fs = std::filesystem;

const std::string kKey = "0123456789abcdef0123456789abcdef-node";  // 38 bytes

api::HttpRequest request(const std::string& path, std::map<std::string, std::string> headers = {}) {
  api::HttpRequest r;
  r.method = "GET";
  r.path = path;
  r.target = path;
  r.headers = std::move(headers);
  return r;
}

class KeyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/airlock-node-key-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text, mode_t mode) {
    std::string path = dir_ + "/key";
    std::ofstream(path, std::ios::trunc) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST(NodeKey, ShortSpacedOrControlKeysAreRefused) {
  EXPECT_TRUE(check_node_key(kKey).has_value());
  auto short_key = check_node_key("only-sixteen-chr");
  ASSERT_FALSE(short_key.has_value());
  EXPECT_NE(short_key.error().message().find("at least 32"), std::string::npos) << short_key.error().message();
  EXPECT_FALSE(check_node_key(kKey + " x").has_value());
  EXPECT_FALSE(check_node_key(kKey + "\r\nX-Evil: 1").has_value());
  EXPECT_FALSE(check_node_key(kKey + "\x7f").has_value());
  EXPECT_FALSE(check_node_key(std::string(kMaxNodeKeyBytes + 1, 'k')).has_value());
}

TEST(NodeKey, RequiredForClusterRolesWithAnErrorThatSaysHow) {
  auto missing = resolve_node_key("", "", true);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("node_key_file"), std::string::npos);
  EXPECT_NE(missing.error().message().find("never on the command line"), std::string::npos);
  // Role all: none needed, none used.
  EXPECT_EQ(resolve_node_key("", "", false).value_or("x"), "");
  EXPECT_EQ(resolve_node_key(kKey, "", true).value_or(""), kKey);
  EXPECT_FALSE(resolve_node_key("short", "", true).has_value());
}

TEST_F(KeyFile, ReadsTheFirstLineOfAPrivateFile) {
  EXPECT_EQ(resolve_node_key("", write(kKey + "\n", 0600), true).value_or(""), kKey);
  EXPECT_EQ(resolve_node_key("", write(kKey + "\r\n", 0400), true).value_or(""), kKey);
}

TEST_F(KeyFile, AFileOthersCanReadIsRefused) {
  auto r = resolve_node_key("", write(kKey, 0644), true);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("readable by group or others"), std::string::npos) << r.error().message();
  EXPECT_FALSE(resolve_node_key("", write(kKey, 0640), true).has_value());
}

TEST_F(KeyFile, EmptyMissingDirectoryOrBothSetAreRefused) {
  EXPECT_FALSE(resolve_node_key("", write("\n", 0600), true).has_value());
  EXPECT_FALSE(resolve_node_key("", dir_ + "/none", true).has_value());
  ::chmod(dir_.c_str(), 0700);
  EXPECT_FALSE(resolve_node_key("", dir_, true).has_value());
  auto both = resolve_node_key(kKey, write(kKey, 0600), true);
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("both"), std::string::npos);
}

TEST(NodeKey, ConfigTakesItFromTheFileNeverAFlag) {
  auto c = service::parse_config("node_key = \"" + kKey + "\"\nnode_key_file = \"/etc/airlock/node-key\"\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->node_key, kKey);
  EXPECT_EQ(c->node_key_file, "/etc/airlock/node-key");
  for (const auto& args : {std::vector<std::string>{"--node-key", kKey}, std::vector<std::string>{"--node-key=" + kKey}}) {
    auto flagged = service::config_from_args(args);
    ASSERT_FALSE(flagged.has_value());
    EXPECT_NE(flagged.error().message().find("never a flag"), std::string::npos) << flagged.error().message();
  }
}

TEST(NodeKey, ComparisonMatchesOnlyTheSameBytes) {
  EXPECT_TRUE(node_key_matches(kKey, kKey));
  EXPECT_FALSE(node_key_matches(kKey, ""));
  EXPECT_FALSE(node_key_matches(kKey, kKey.substr(0, kKey.size() - 1)));  // a prefix
  EXPECT_FALSE(node_key_matches(kKey, kKey + "x"));                       // longer
  EXPECT_FALSE(node_key_matches(kKey, std::string(kKey.size(), 'a')));    // same length
  std::string flipped = kKey;
  flipped.back() ^= 1;
  EXPECT_FALSE(node_key_matches(kKey, flipped));
  // No key configured matches nothing, not even an empty header.
  EXPECT_FALSE(node_key_matches("", ""));
}

TEST(WorkerGate, RefusesV1WithoutTheKey) {
  auto r = worker_gate(kKey, request("/v1/sessions"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("\"worker_node\""), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("send requests to an API node"), std::string::npos);
  EXPECT_EQ(r->body.find(kKey), std::string::npos);
}

TEST(WorkerGate, RefusesWrongWrongLengthAndRepeatedKeys) {
  for (const std::string& presented :
       {std::string("wrong"), kKey.substr(0, 31), kKey + kKey, std::string(kKey.size(), 'x'), std::string(),
        kKey + ", " + kKey /* the header twice, as HttpRequest joins repeats */, kKey + ", wrong",
        "wrong, " + kKey, " " + kKey}) {
    auto r = worker_gate(kKey, request("/v1/jobs", {{"x-airlock-node-key", presented}}));
    ASSERT_TRUE(r.has_value()) << presented;
    EXPECT_EQ(r->status, 403) << presented;
  }
  // The client's Authorization alone is not enough, however valid.
  EXPECT_TRUE(worker_gate(kKey, request("/v1/jobs", {{"authorization", "Bearer " + kKey}})).has_value());
}

TEST(WorkerGate, RefusesEveryOtherPathTooNotOnly404s) {
  for (const char* path : {"/", "/mcp", "/ui/", "/openapi.json", "/healthz/x", "/metrics/", "/v1/nothing"})
    EXPECT_TRUE(worker_gate(kKey, request(path)).has_value()) << path;
}

TEST(WorkerGate, LetsTheKeyAndTheProbesThrough) {
  EXPECT_FALSE(worker_gate(kKey, request("/v1/sessions/s1/execs", {{"x-airlock-node-key", kKey}})).has_value());
  EXPECT_FALSE(worker_gate(kKey, request("/healthz")).has_value());
  EXPECT_FALSE(worker_gate(kKey, request("/metrics")).has_value());
  int told = 0;
  auto gate = make_worker_gate(kKey, [&told](const api::HttpRequest&) { ++told; });
  EXPECT_TRUE(gate(request("/v1/jobs")).has_value());
  EXPECT_FALSE(gate(request("/healthz")).has_value());
  EXPECT_EQ(told, 1);
}

}  // namespace
}  // namespace airlock::cluster
