#include "service/job_request.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "service/config.h"

using namespace airlock::service;
using nlohmann::json;

namespace {
std::string error_of(const json& body, PolicyCaps caps = {}) {
  auto r = parse_job_request(body, caps);
  return r ? std::string("<accepted>") : r.error().message();
}
}  // namespace

TEST(JobRequest, CommandOrCode) {
  auto r = parse_job_request(json{{"command", {"python3", "-c", "print(1)"}}}, {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->command[0], "python3");
  EXPECT_FALSE(r->code);
  auto c = parse_job_request(json{{"code", "print(2)"}}, {});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->command, (std::vector<std::string>{"python3", "/inputs/main.py"}));
  EXPECT_EQ(c->code_name, "main.py");
  auto s = parse_job_request(json{{"code", "echo hi"}, {"language", "sh"}}, {});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->command[0], "sh");
}

TEST(JobRequest, RefusalsNameTheField) {
  EXPECT_NE(error_of(json::array()).find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(json::object()).find("exactly one"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"code", "y"}}).find("exactly one"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", "ls"}}).find("command: must be an array"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {1}}}).find("command[0]"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", json::array()}}).find("must name a program"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"bogus", 1}}).find("bogus: unknown field"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"nope", 1}}}}).find("policy.nope"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"timeout_s", "10"}}}}).find("policy.timeout_s: must be a number"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"timeout_s", -1}}}}).find("more than 0"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"network", "all"}}}}).find("policy.network"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"env", {{"1X", "v"}}}}}}).find("policy.env.1X"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"image", "Ubuntu:22.04"}}).find("image"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"inputs", {"f1", "f1"}}}).find("twice"), std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"wait_s", 9999}}).find("wait_s"), std::string::npos);
  EXPECT_NE(error_of(json{{"code", "x"}, {"language", "ruby"}}).find("language"), std::string::npos);
}

TEST(JobRequest, TenantCapsBound) {
  PolicyCaps caps;
  caps.max_memory_bytes = 256ull << 20;
  caps.max_timeout_ms = 10'000;
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"memory_mb", 512}}}}, caps).find("tenant's limit"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"timeout_s", 11}}}}, caps).find("tenant's limit"),
            std::string::npos);
  auto ok = parse_job_request(json{{"command", {"x"}}, {"policy", {{"memory_mb", 128}, {"timeout_s", 2.5}}}}, caps);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->policy.memory_bytes, 128ull << 20);
  EXPECT_EQ(ok->policy.timeout_ms, 2500u);
}

TEST(JobRequest, ALimitInARefusalIsWrittenAsANumber) {
  PolicyCaps caps;  // 1024 MiB, 600 s, 2 cpus
  EXPECT_EQ(error_of(json{{"command", {"x"}}, {"policy", {{"memory_mb", 2048}}}}, caps),
            "policy.memory_mb: exceeds the tenant's limit of 1024");
  EXPECT_EQ(error_of(json{{"command", {"x"}}, {"policy", {{"cpus", 3}}}}, caps),
            "policy.cpus: exceeds the tenant's limit of 2");
  caps.max_cpus = 1.5;
  caps.max_timeout_ms = 2'500;
  caps.max_memory_bytes = 384ull << 19;  // 192 MiB
  EXPECT_EQ(error_of(json{{"command", {"x"}}, {"policy", {{"cpus", 2}}}}, caps),
            "policy.cpus: exceeds the tenant's limit of 1.5");
  EXPECT_EQ(error_of(json{{"command", {"x"}}, {"policy", {{"timeout_s", 3}}}}, caps),
            "policy.timeout_s: exceeds the tenant's limit of 2.5");
  EXPECT_EQ(error_of(json{{"command", {"x"}}, {"policy", {{"memory_mb", 200}}}}, caps),
            "policy.memory_mb: exceeds the tenant's limit of 192");
}

TEST(JobRequest, BecomesTheEnginesRunRequest) {
  auto r = parse_job_request(json{{"command", {"python3", "/inputs/a.py"}},
                                  {"policy", {{"timeout_s", 2.5}, {"env", {{"MODE", "x y"}}}}}},
                             {});
  ASSERT_TRUE(r.has_value());
  RunPlacement at;
  at.input_paths = {"/data/f/1/a.py"};
  at.output_dir = "/data/out";
  at.state_dir = "/state";
  at.image_dir = "/images";
  at.secrets_file = "/etc/secrets.toml";  // not for a job without network rules
  auto run = run_request_for(*r, at);
  EXPECT_EQ(run.command, (std::vector<std::string>{"python3", "/inputs/a.py"}));
  EXPECT_EQ(run.policy.timeout_ms, 2500u);  // exact: no text in between
  EXPECT_EQ(run.policy.env, (std::vector<std::pair<std::string, std::string>>{{"MODE", "x y"}}));
  EXPECT_EQ(run.inputs, at.input_paths);
  EXPECT_EQ(run.output_dir, "/data/out");
  EXPECT_EQ(run.state_dir, "/state");
  EXPECT_EQ(run.image_dir, "/images");
  EXPECT_EQ(run.image, "host");
  EXPECT_EQ(run.start, "auto");
  EXPECT_TRUE(run.secrets_file.empty());
  EXPECT_TRUE(run.record_path.empty());
}

TEST(JobRequest, OutputPolicyTravelsToTheEngine) {
  auto r = parse_job_request(json{{"command", {"x"}},
                                  {"policy", {{"outputs", {{"types", {"png"}}, {"max_files", 2}, {"max_file_mb", 1}}}}}},
                             {});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto run = run_request_for(*r, {});
  EXPECT_EQ(run.policy.outputs.allowed, airlock::workspace::TypeSet{airlock::workspace::FileType::kPng});
  EXPECT_EQ(run.policy.outputs.max_count, 2u);
  EXPECT_EQ(run.policy.outputs.max_file_bytes, 1u << 20);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"outputs", {{"types", {"exe"}}}}}}}).find("policy.outputs.types"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"command", {"x"}}, {"policy", {{"outputs", {{"names", 1}}}}}}).find("policy.outputs.names"),
            std::string::npos);
}

TEST(ServiceConfig, EventKeepAliveInterval) {
  EXPECT_EQ(ServiceConfig{}.event_keepalive_ms, 15'000u);
  auto c = parse_config("event_keepalive_ms = 250\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->event_keepalive_ms, 250u);
  auto f = config_from_args({"--event-keepalive-ms", "60"});
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(f->event_keepalive_ms, 60u);
  // Too short would flood a stream; too long defeats the point.
  auto low = parse_config("event_keepalive_ms = 10\n");
  ASSERT_FALSE(low.has_value());
  EXPECT_NE(low.error().message().find("from 50 to 600000"), std::string::npos);
  EXPECT_FALSE(config_from_args({"--event-keepalive-ms", "700000"}).has_value());
}

// The image store of `airlock serve`: --image-dir, else $AIRLOCK_IMAGE_DIR (as
// `airlock run` and `airlock image` take it), else the file's image_dir.
TEST(ServiceConfig, ImageDirFlagOverEnvironmentOverFile) {
  char path[] = "/tmp/airlock-config-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string toml = "image_dir = \"/from-file\"\n";
  ASSERT_EQ(::write(fd, toml.data(), toml.size()), static_cast<ssize_t>(toml.size()));
  ::close(fd);
  const char* saved = std::getenv("AIRLOCK_IMAGE_DIR");
  std::string saved_value = saved ? saved : "";
  ::unsetenv("AIRLOCK_IMAGE_DIR");
  EXPECT_EQ(config_from_args({})->image_dir, "") << "the default: <state_dir>/images";
  EXPECT_EQ(config_from_args({"--config", path})->image_dir, "/from-file");
  ::setenv("AIRLOCK_IMAGE_DIR", "/from-env", 1);
  EXPECT_EQ(config_from_args({})->image_dir, "/from-env");
  EXPECT_EQ(config_from_args({"--config", path})->image_dir, "/from-env");
  EXPECT_EQ(config_from_args({"--image-dir", "/from-flag", "--config", path})->image_dir, "/from-flag");
  ::setenv("AIRLOCK_IMAGE_DIR", "", 1);
  EXPECT_EQ(config_from_args({"--config", path})->image_dir, "/from-file") << "an empty variable is unset";
  EXPECT_FALSE(config_from_args({"--image-dir", ""}));
  if (saved) ::setenv("AIRLOCK_IMAGE_DIR", saved_value.c_str(), 1);
  else ::unsetenv("AIRLOCK_IMAGE_DIR");
  ::unlink(path);
  EXPECT_EQ(choose_image_dir("", "", ""), "");
  EXPECT_EQ(choose_image_dir("f", "e", "c"), "f");
  EXPECT_EQ(choose_image_dir("", "e", "c"), "e");
  EXPECT_EQ(choose_image_dir("", "", "c"), "c");
}

TEST(ServiceConfig, TomlThenFlags) {
  auto c = parse_config("listen = \"127.0.0.1:9000\"\nmax_running = 3\ndata_dir = \"/d\"\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->listen_port, 9000);
  EXPECT_EQ(c->max_running, 3u);
  EXPECT_EQ(c->data_dir, "/d");
  EXPECT_FALSE(parse_config("lisen = \"x\"\n").has_value());  // typo: refused
  EXPECT_FALSE(parse_config("max_running = -1\n").has_value());
  EXPECT_FALSE(parse_config("listen = \"nohostport\"\n").has_value());
  EXPECT_FALSE(parse_config("[[[").has_value());
  auto f = config_from_args({"--listen", "127.0.0.1:0", "--max-queued", "5"});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->listen_port, 0);
  EXPECT_EQ(f->max_queued, 5u);
  EXPECT_FALSE(config_from_args({"--max-queued", "five"}).has_value());
  EXPECT_FALSE(config_from_args({"--bogus", "1"}).has_value());
}

TEST(ServiceConfig, PerTenantWeightQueueCapAndStorageQuota) {
  auto c = parse_config(
      "max_queued = 40\ntenant_storage_mb = 100\n"
      "[tenants.analytics]\nweight = 3\nmax_queued = 20\nstorage_mb = 2048\n");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(tenant_weight(*c, "analytics"), 3u);
  EXPECT_EQ(tenant_weight(*c, "other"), 1u);
  EXPECT_EQ(tenant_max_queued(*c, "analytics"), 20u);
  EXPECT_EQ(tenant_max_queued(*c, "other"), 10u);  // a quarter of max_queued
  EXPECT_EQ(tenant_storage_bytes(*c, "analytics"), 2048ull << 20);
  EXPECT_EQ(tenant_storage_bytes(*c, "other"), 100ull << 20);
  EXPECT_EQ(tenant_storage_bytes(ServiceConfig{}, "x"), 10ull << 30);  // the documented default
  EXPECT_EQ(tenant_max_queued(ServiceConfig{.max_queued = 2}, "x"), 1u);  // never 0
  for (const char* bad : {"[tenants.a]\nweight = 0\n", "[tenants.a]\nweight = 101\n",
                          "[tenants.a]\nwieght = 2\n", "[tenants.a]\nmax_queued = -1\n", "tenants = 3\n",
                          "[tenants.a]\nstorage_mb = \"big\"\n"})
    EXPECT_FALSE(parse_config(bad).has_value()) << bad;
  auto f = config_from_args({"--tenant-max-queued", "7", "--tenant-storage-mb", "5"});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(tenant_max_queued(*f, "x"), 7u);
  EXPECT_EQ(tenant_storage_bytes(*f, "x"), 5ull << 20);
}

// Found by fuzz/config.cc (fuzz/corpus/config/invalid_utf8_literal_string):
// toml11 read past its buffer (ASan: heap-buffer-overflow) while reporting an
// invalid UTF-8 byte in a string. Such a file is refused before toml11 sees it.
TEST(ServiceConfig, RefusesAFileThatIsNotUtf8TextBeforeTomlParsesIt) {
  auto bad = parse_config("data_dir = '/srv/\xff\xff'\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().what.find("not UTF-8 text"), std::string::npos) << bad.error().what;
  EXPECT_FALSE(parse_config("data_dir = \"/d\"\x01\n").has_value());
  auto good = parse_config("data_dir = '/srv/caf\xc3\xa9'\n");  // UTF-8 is fine
  ASSERT_TRUE(good.has_value()) << good.error().what;
  EXPECT_EQ(good->data_dir, "/srv/caf\xc3\xa9");
}
