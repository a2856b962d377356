// Signed checkpoints of the chain heads: the line format, its signature, and
// that a chain rewritten consistently (so plain verify passes) no longer
// matches a checkpoint taken before.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "service/checkpoint_writer.h"
#include "store/checkpoint.h"
#include "store/store.h"
#include "store_test_util.h"
#include "support/chain_rewrite.h"

namespace airlock::store {
namespace {

using testing::TempDir;

const std::string kHead(64, 'a');

EvpKey new_key() {
  auto k = generate_checkpoint_key();
  EXPECT_TRUE(k) << k.error().message();
  return std::move(*k);
}

std::string line_for(EVP_PKEY* key, const std::string& tenant = "t1", int64_t seq = 7,
                     const std::string& head = kHead) {
  auto line = make_checkpoint_line({tenant, seq, head, "2026-12-01T18:00:00Z", "", ""}, key);
  EXPECT_TRUE(line) << line.error().message();
  return *line;
}

std::string verify_text(const std::string& line, EVP_PKEY* key) {
  auto c = parse_checkpoint_line(line);
  if (!c) return "parse: " + c.error().message();
  auto st = verify_checkpoint(*c, key);
  return st ? "" : st.error().message();
}

TEST(CheckpointLine, AGoodLineVerifiesAndSaysWhatWasSigned) {
  EvpKey key = new_key();
  std::string line = line_for(key.get());
  auto c = parse_checkpoint_line(line);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->tenant_id, "t1");
  EXPECT_EQ(c->seq, 7);
  EXPECT_EQ(c->head_hash, kHead);
  EXPECT_EQ(c->key_id, *checkpoint_key_id(key.get()));
  EXPECT_EQ(verify_text(line, key.get()), "");
  // The public half alone, through PEM, verifies it too.
  auto pub = read_public_key_pem(*public_key_pem(key.get()));
  ASSERT_TRUE(pub) << pub.error().message();
  EXPECT_EQ(verify_text(line, pub->get()), "");
  auto again = read_private_key_pem(*private_key_pem(key.get()));
  ASSERT_TRUE(again);
  EXPECT_EQ(verify_text(line_for(again->get()), pub->get()), "");
}

TEST(CheckpointLine, EachChangedSignedFieldFailsTheSignature) {
  EvpKey key = new_key();
  auto j = nlohmann::ordered_json::parse(line_for(key.get()));
  for (auto [field, value] : std::vector<std::pair<std::string, nlohmann::ordered_json>>{
           {"tenant", "t2"}, {"seq", 8}, {"head", std::string(64, 'b')},
           {"time", "2026-12-01T18:00:01Z"}}) {
    auto changed = j;
    changed[field] = value;
    EXPECT_NE(verify_text(changed.dump(), key.get()).find("bad signature"), std::string::npos)
        << field;
  }
  // A signature of another line does not carry over.
  auto other = nlohmann::ordered_json::parse(line_for(key.get(), "t1", 6));
  auto swapped = j;
  swapped["sig"] = other["sig"];
  EXPECT_NE(verify_text(swapped.dump(), key.get()).find("bad signature"), std::string::npos);
}

TEST(CheckpointLine, AnotherKeyIsRefusedByItsId) {
  EvpKey key = new_key(), other = new_key();
  std::string line = line_for(key.get());
  EXPECT_NE(verify_text(line, other.get()).find("not by the given key"), std::string::npos);
  // Claiming the other key's id does not help: the signature is still the first key's.
  auto j = nlohmann::ordered_json::parse(line);
  j["key_id"] = *checkpoint_key_id(other.get());
  EXPECT_NE(verify_text(j.dump(), other.get()).find("bad signature"), std::string::npos);
}

TEST(CheckpointLine, GarbledLinesFailWithTheReason) {
  EvpKey key = new_key();
  auto j = nlohmann::ordered_json::parse(line_for(key.get()));
  auto with = [&](const char* field, nlohmann::ordered_json v) {
    auto c = j;
    if (v.is_null()) c.erase(field);
    else c[field] = v;
    return verify_text(c.dump(), key.get());
  };
  EXPECT_NE(verify_text("not json", key.get()).find("not a JSON object"), std::string::npos);
  EXPECT_NE(verify_text(line_for(key.get()).substr(0, 40), key.get()).find("not a JSON object"),
            std::string::npos);
  EXPECT_NE(with("head", nullptr).find("no string \"head\""), std::string::npos);
  EXPECT_NE(with("seq", "7").find("positive integer"), std::string::npos);
  EXPECT_NE(with("seq", 0).find("positive integer"), std::string::npos);
  EXPECT_NE(with("head", "ABC").find("64 lower-case hex"), std::string::npos);
  EXPECT_NE(with("tenant", "a\nb").find("newline"), std::string::npos);
  EXPECT_NE(with("sig", "%%%").find("not 64 bytes"), std::string::npos);
  EXPECT_NE(with("sig", "AAAA").find("not 64 bytes"), std::string::npos);
  EXPECT_NE(verify_text(std::string(5000, ' '), key.get()).find("too long"), std::string::npos);
  EXPECT_FALSE(read_public_key_pem("-----BEGIN PUBLIC KEY-----\nxx\n-----END PUBLIC KEY-----\n"));
}

TEST(CheckpointLine, MismatchNamesTheTenantAndSeq) {
  Checkpoint c{"t1", 5, kHead, "2026-12-01T18:00:00Z", "", ""};
  EXPECT_EQ(checkpoint_mismatch(c, kHead, false), "");
  EXPECT_EQ(checkpoint_mismatch(c, std::string(64, 'b'), false),
            "tenant t1: checkpoint at seq 5 (2026-12-01T18:00:00Z): the chain's hash there "
            "differs: records at or before seq 5 were rewritten");
  EXPECT_NE(checkpoint_mismatch(c, std::nullopt, false).find("no record at that seq now"),
            std::string::npos);
  EXPECT_EQ(checkpoint_mismatch(c, std::nullopt, true), "");  // removed by retention
}

class CheckpointStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(data_.path());
    ASSERT_TRUE(s) << s.error().message();
    store_ = std::move(*s);
    tenant_ = store_->create_tenant("acme", {})->id;
    other_ = store_->create_tenant("globex", {})->id;
    auto key = generate_checkpoint_key();
    std::ofstream(key_path()) << *private_key_pem(key->get());
    pub_ = read_public_key_pem(*public_key_pem(key->get())).value();
  }

  std::string job(const std::string& tenant, int n) {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k";
    row.request_json = "{}";
    row.created_at = "2026-12-01T12:00:00.000Z";
    auto created = store_->create_job(row);
    EXPECT_TRUE(created);
    nlohmann::json rec = {{"id", created->first.id}, {"outcome", "succeeded"}, {"n", n}};
    auto stored = store_->finish_job(created->first.id, "succeeded", row.created_at, rec.dump(), {});
    EXPECT_TRUE(stored) << stored.error().message();
    return rec.dump();
  }

  // Every problem of the lines in the checkpoint file against the store now.
  std::vector<std::string> check() {
    std::vector<std::string> problems;
    std::ifstream in(file());
    for (std::string line; std::getline(in, line);) {
      auto c = parse_checkpoint_line(line);
      EXPECT_TRUE(c) << line;
      EXPECT_TRUE(verify_checkpoint(*c, pub_.get()));
      auto link = store_->link_at(c->tenant_id, c->seq);
      EXPECT_TRUE(link);
      if (auto p = checkpoint_mismatch(*c, link->hash, link->removed_by_retention); !p.empty())
        problems.push_back(p);
    }
    return problems;
  }

  std::string key_path() const { return keys_.path() + "/checkpoint.pem"; }
  std::string file() const { return keys_.path() + "/checkpoints.jsonl"; }
  size_t lines() const {
    std::ifstream in(file());
    size_t n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return n;
  }

  TempDir data_, keys_;
  std::unique_ptr<Store> store_;
  std::string tenant_, other_;
  EvpKey pub_;
};

TEST_F(CheckpointStore, AConsistentRewritePassesVerifyButNotTheCheckpoint) {
  job(tenant_, 1);
  job(tenant_, 2);
  job(other_, 1);
  auto writer = service::CheckpointWriter::open(key_path(), file(), data_.path());
  ASSERT_TRUE(writer) << writer.error().message();
  auto written = writer->write_changed(*store_, "2026-12-01T18:00:00Z");
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_EQ(written->size(), 2u);  // one per tenant
  // Unchanged heads are not written again; a changed one is.
  EXPECT_EQ(writer->write_changed(*store_, "2026-12-01T18:05:00Z")->size(), 0u);
  job(tenant_, 3);
  EXPECT_EQ(writer->write_changed(*store_, "2026-12-01T18:10:00Z")->size(), 1u);
  EXPECT_EQ(lines(), 3u);
  EXPECT_TRUE(check().empty());

  store_.reset();
  auto forge = [](std::string json) { return json.replace(json.find("succeeded"), 9, "failed"); };
  ASSERT_EQ(airlock::testing::rewrite_chain(data_.path() + "/airlock.db", tenant_, 1, forge), "");
  store_ = std::move(*Store::open(data_.path()));
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << report->problems[0];  // the chain itself is consistent again
  auto problems = check();
  ASSERT_EQ(problems.size(), 2u);  // both of the tenant's checkpoints, none of the other's
  EXPECT_NE(problems[0].find("tenant " + tenant_ + ": checkpoint at seq 2"), std::string::npos)
      << problems[0];
  EXPECT_NE(problems[1].find("records at or before seq 3 were rewritten"), std::string::npos)
      << problems[1];
}

TEST_F(CheckpointStore, TheKeyIsRefusedInsideTheDataDirectory) {
  std::string inside = data_.path() + "/checkpoint.pem";
  std::filesystem::copy_file(key_path(), inside);
  auto writer = service::CheckpointWriter::open(inside, file(), data_.path());
  ASSERT_FALSE(writer);
  EXPECT_NE(writer.error().message().find("inside the data directory"), std::string::npos);
  // Through a symlink from outside too: the real path counts.
  std::string link = keys_.path() + "/link.pem";
  std::filesystem::create_symlink(inside, link);
  EXPECT_FALSE(service::CheckpointWriter::open(link, file(), data_.path()));
  EXPECT_FALSE(service::CheckpointWriter::open(keys_.path() + "/none.pem", file(), data_.path()));
}

}  // namespace
}  // namespace airlock::store

#include "service/config.h"

namespace airlock::service {
namespace {

TEST(CheckpointConfig, KeysParseAndTheIntervalDefaultsTo300) {
  auto none = parse_config("");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->checkpoint_interval_s, 300u);
  EXPECT_EQ(none->checkpoint_key, "");
  auto c = parse_config(
      "checkpoint_key = \"/etc/airlock/ck.pem\"\ncheckpoint_file = \"/var/log/ck.jsonl\"\n"
      "checkpoint_interval_s = 60\n");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->checkpoint_key, "/etc/airlock/ck.pem");
  EXPECT_EQ(c->checkpoint_file, "/var/log/ck.jsonl");
  EXPECT_EQ(c->checkpoint_interval_s, 60u);
  EXPECT_FALSE(parse_config("checkpoint_interval_s = -1\n"));
  EXPECT_FALSE(parse_config("checkpoint_keys = \"x\"\n"));  // a typo is an error
}

}  // namespace
}  // namespace airlock::service
