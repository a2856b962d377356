// Signed checkpoints against a consistent rewrite (docs/store.md,
// "Checkpoints"): a real serve with a checkpoint key runs jobs and writes the
// chain heads when it stops; someone who can write the database then rewrites
// a record and recomputes the whole chain, so plain `airlock verify` passes,
// and `airlock verify --checkpoints` fails naming the tenant and the seq.
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "checkpoint_helpers.h"
#include "run_helpers.h"
#include "service_fixture.h"
#include "store/store.h"
#include "support/chain_rewrite.h"

using namespace airlock::testing;
using nlohmann::json;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(Checkpoints, AChainRewrittenConsistentlyFailsAgainstTheSignedCheckpoints) {
  KeyDir keys;
  const std::string key = keys.path + "/checkpoint.pem", file = keys.path + "/checkpoints.jsonl",
                    config = keys.path + "/serve.toml";
  auto made = run_airlock({"keys", "checkpoint-key", "--out", key});
  ASSERT_EQ(made.status, 0) << made.err;
  struct stat st{};
  ASSERT_EQ(::stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ofstream(config) << "checkpoint_key = \"" << key << "\"\ncheckpoint_file = \"" << file
                        << "\"\ncheckpoint_interval_s = 3600\n";

  ServiceProcess svc({"--config", config});
  HttpClient http = svc.client();
  EXPECT_EQ(run_job(http, svc.alpha, {{"command", {"sh", "-c", "exit 3"}}})["outcome"], "failed");
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(run_job(http, svc.alpha, {{"command", {"true"}}})["outcome"], "succeeded");
  EXPECT_EQ(run_job(http, svc.beta, {{"command", {"true"}}})["outcome"], "succeeded");
  ASSERT_EQ(svc.stop(), 0) << svc.log();

  // At shutdown: one signed line per tenant, and the same in the log.
  std::string lines = read_all(file);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2) << lines;
  EXPECT_NE(svc.log().find("\"event\":\"checkpoint\""), std::string::npos) << svc.log();
  const std::string alpha = tenant_id(svc.data_dir(), "alpha");
  const std::string beta = tenant_id(svc.data_dir(), "beta");

  const std::vector<std::string> with_checkpoints = {
      "verify", "--data-dir", svc.data_dir(), "--checkpoints", file, "--checkpoint-public-key",
      key + ".pub"};
  auto intact = run_airlock(with_checkpoints);
  EXPECT_EQ(intact.status, 0) << intact.out << intact.err;
  EXPECT_NE(intact.out.find("2 checkpoints match"), std::string::npos) << intact.out;

  // The attacker makes alpha's failed job a success and recomputes the chain.
  ASSERT_EQ(rewrite_chain(svc.data_dir() + "/airlock.db", alpha, 1,
                          [](std::string json) {
                            auto at = json.find("\"failed\"");
                            return at == std::string::npos ? json : json.replace(at, 8, "\"succeeded\"");
                          }),
            "");
  auto plain = run_airlock({"verify", "--data-dir", svc.data_dir()});
  EXPECT_EQ(plain.status, 0) << "the rewrite should be consistent: " << plain.out << plain.err;

  auto caught = run_airlock(with_checkpoints);
  EXPECT_EQ(caught.status, 1) << caught.out << caught.err;
  EXPECT_NE(caught.out.find("tenant " + alpha + ": checkpoint at seq 3"), std::string::npos)
      << caught.out;
  EXPECT_NE(caught.out.find("records at or before seq 3 were rewritten"), std::string::npos)
      << caught.out;
  EXPECT_EQ(caught.out.find(beta), std::string::npos) << "beta's chain is untouched: " << caught.out;

  // A forged checkpoint line (the attacker signs nothing: it has no key) is refused.
  std::string forged = lines.substr(0, lines.find('\n'));
  auto head = forged.find("\"head\":\"") + 8;
  forged[head] = forged[head] == '0' ? '1' : '0';
  std::ofstream(keys.path + "/forged.jsonl") << forged << "\n";
  auto refused = run_airlock({"verify", "--data-dir", svc.data_dir(), "--checkpoints",
                              keys.path + "/forged.jsonl", "--checkpoint-public-key", key + ".pub"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.out.find("bad signature"), std::string::npos) << refused.out;

  // The key may not live where the database's writer could take it.
  auto inside = run_airlock({"keys", "checkpoint-key", "--data-dir", svc.data_dir(), "--out",
                             svc.data_dir() + "/checkpoint.pem"});
  EXPECT_EQ(inside.status, 1);
  EXPECT_NE(inside.err.find("inside the data directory"), std::string::npos) << inside.err;
  EXPECT_FALSE(std::filesystem::exists(svc.data_dir() + "/checkpoint.pem"));
  // Nor may serve use one copied there: it refuses to start.
  std::filesystem::copy_file(key, svc.data_dir() + "/copied.pem");
  std::ofstream(config, std::ios::trunc) << "checkpoint_key = \"" << svc.data_dir()
                                         << "/copied.pem\"\ncheckpoint_file = \"" << file << "\"\n";
  EXPECT_THROW(svc.start(), std::runtime_error);
  EXPECT_NE(svc.log().find("inside the data directory"), std::string::npos) << svc.log();
}

TEST(Checkpoints, AHeadThatChangedIsCheckpointedEveryIntervalWhileServing) {
  KeyDir keys;
  const std::string key = keys.path + "/checkpoint.pem", file = keys.path + "/checkpoints.jsonl",
                    config = keys.path + "/serve.toml";
  ASSERT_EQ(run_airlock({"keys", "checkpoint-key", "--out", key}).status, 0);
  std::ofstream(config) << "checkpoint_key = \"" << key << "\"\ncheckpoint_file = \"" << file
                        << "\"\ncheckpoint_interval_s = 1\n";
  ServiceProcess svc({"--config", config});
  HttpClient http = svc.client();
  // The seqs of alpha's checkpoints in the file, once it has `n` lines (5 s at most).
  auto wait_lines = [&](size_t n) {
    std::vector<json> lines;
    for (int waited = 0; waited < 5000; waited += 50) {
      lines.clear();
      std::ifstream in(file);
      for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
      if (lines.size() >= n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return lines;
  };
  run_job(http, svc.alpha, {{"command", {"true"}}});
  auto first = wait_lines(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["seq"], 1);
  // Nothing changed: no new line over the next interval; then a new job's head is.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(wait_lines(1).size(), 1u);
  run_job(http, svc.alpha, {{"command", {"true"}}});
  auto second = wait_lines(2);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[1]["seq"], 2);
  EXPECT_EQ(second[1]["tenant"], first[0]["tenant"]);
  ASSERT_EQ(svc.stop(), 0);
  EXPECT_EQ(wait_lines(2).size(), 2u);  // the stop found nothing new to sign
}
