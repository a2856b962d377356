// Retention records as proofs of a removal (store/retention_proof.h), and the
// forgery they stop: on a stopped store, a tenant's records and job rows are
// deleted, a retention record claims their removal through the last
// checkpointed seq with that checkpoint's signed head as last_removed_hash, and
// the chain head points at it. Plain verify cannot tell; verify --checkpoints
// (store::check_checkpoints) refuses it, naming the tenant, the record and why.
// On both backends.
#include "store/retention_proof.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "jobs/record.h"
#include "service/checkpoint_writer.h"
#include "store/chain.h"
#include "store/checkpoint_check.h"
#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

EvpKey new_key() {
  auto k = generate_checkpoint_key();
  EXPECT_TRUE(k) << k.error().message();
  return std::move(*k);
}

RetentionClaim claim_of(const std::string& removed_through, uint64_t days, const std::string& at) {
  RetentionClaim c;
  c.removed_jobs = {"j1", "j2"};
  c.removed_through_seq = 2;
  c.last_removed_hash = std::string(64, 'a');
  c.removed_through_time = removed_through;
  c.retention_days = days;
  c.at = at;
  return c;
}

bool has(const std::vector<std::string>& problems, const std::string& a,
         const std::string& b = "") {
  for (const auto& p : problems)
    if (p.find(a) != std::string::npos && p.find(b) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

TEST(RetentionProof, ASignedRecordVerifiesAndEachChangedFieldFailsIt) {
  EvpKey key = new_key();
  auto text = retention_record_text(
      "t1", claim_of("2026-01-01T00:00:00.000Z", 30, "2026-02-01T00:00:00.000Z"), key.get());
  ASSERT_TRUE(text) << text.error().message();
  auto claim = parse_retention_claim(*text);
  ASSERT_TRUE(claim);
  EXPECT_TRUE(names_its_policy(*claim));
  EXPECT_EQ(claim->key_id, *checkpoint_key_id(key.get()));
  EXPECT_EQ(retention_signature_problem("t1", *claim, key.get()), "");
  EXPECT_EQ(retention_age_problem(*claim), "");
  // The chain's own reading of it is unchanged.
  auto cover = parse_retention_record(*text);
  ASSERT_TRUE(cover);
  EXPECT_EQ(cover->through_seq, 2);
  // Another tenant, or any field changed: the signature no longer holds.
  EXPECT_NE(retention_signature_problem("t2", *claim, key.get()).find("bad signature"),
            std::string::npos);
  auto j = nlohmann::ordered_json::parse(*text);
  for (auto [field, value] : std::vector<std::pair<std::string, nlohmann::ordered_json>>{
           {"removed_through_seq", 3},
           {"last_removed_hash", std::string(64, 'b')},
           {"removed_through_time", "2026-01-02T00:00:00.000Z"},
           {"retention_days", 1},
           {"at", "2026-03-01T00:00:00.000Z"},
           {"removed_jobs", nlohmann::ordered_json::array({"j1"})}}) {
    auto changed = j;
    changed[field] = value;
    auto c = parse_retention_claim(changed.dump());
    ASSERT_TRUE(c) << field;
    EXPECT_NE(retention_signature_problem("t1", *c, key.get()).find("bad signature"),
              std::string::npos)
        << field;
  }
  // Another key is named as such.
  EvpKey other = new_key();
  EXPECT_NE(retention_signature_problem("t1", *claim, other.get()).find("not by the given key"),
            std::string::npos);
  // Unsigned.
  auto unsigned_text = retention_record_text(
      "t1", claim_of("2026-01-01T00:00:00.000Z", 30, "2026-02-01T00:00:00.000Z"), nullptr);
  ASSERT_TRUE(unsigned_text);
  EXPECT_EQ(unsigned_text->find("\"sig\""), std::string::npos);
  EXPECT_EQ(retention_signature_problem("t1", *parse_retention_claim(*unsigned_text), key.get()),
            "is not signed by the checkpoint key");
}

TEST(RetentionProof, ARemovalYoungerThanItsPolicyIsAProblem) {
  // Exactly retention_days old: allowed.
  EXPECT_EQ(
      retention_age_problem(claim_of("2026-01-01T00:00:00.000Z", 31, "2026-02-01T00:00:00.000Z")),
      "");
  // One millisecond younger: not.
  EXPECT_NE(
      retention_age_problem(claim_of("2026-01-01T00:00:00.001Z", 31, "2026-02-01T00:00:00.000Z"))
          .find("younger than the policy allows"),
      std::string::npos);
  // Seconds old under a 30-day policy (the forgery's numbers).
  std::string p =
      retention_age_problem(claim_of("2026-12-08T01:00:00.000Z", 30, "2026-12-08T01:00:05.000Z"));
  EXPECT_EQ(
      p,
      "removed records as recent as 2026-12-08T01:00:00.000Z at 2026-12-08T01:00:05.000Z, under "
      "retention_days 30: younger than the policy allows");
  EXPECT_NE(
      retention_age_problem(claim_of("2026-01-01T00:00:00Z", UINT64_MAX, "2026-02-01T00:00:00Z")),
      "");
  EXPECT_NE(
      retention_age_problem(claim_of("yesterday", 1, "2026-02-01T00:00:00Z")).find("RFC 3339"),
      std::string::npos);
  // A record from before policies were named.
  auto legacy = parse_retention_claim(retention_record_json({"j"}, 1, std::string(64, 'a')));
  ASSERT_TRUE(legacy);
  EXPECT_FALSE(names_its_policy(*legacy));
  EXPECT_NE(retention_age_problem(*legacy).find("names no retention policy"), std::string::npos);
}

class RetentionForgery : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(data_.path(), store_, options_);
    tenant_ = store_->create_tenant("acme", {})->id;
    other_ = store_->create_tenant("globex", {})->id;
    key_ = new_key();
    std::ofstream(key_path()) << *private_key_pem(key_.get());
    pub_ = read_public_key_pem(*public_key_pem(key_.get())).value();
    auto writer = service::CheckpointWriter::open(key_path(), file(), data_.path());
    ASSERT_TRUE(writer) << writer.error().message();
    writer_.emplace(std::move(*writer));
  }

  std::string job(const std::string& tenant, const std::string& finished_at) {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k";
    row.request_json = "{}";
    row.created_at = finished_at;
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    nlohmann::json rec = {{"id", created->first.id}, {"outcome", "succeeded"}};
    auto stored = store_->finish_job(created->first.id, "succeeded", finished_at, rec.dump(), {});
    EXPECT_TRUE(stored) << stored.error().message();
    return created->first.id;
  }
  void checkpoint(const std::string& now) {
    auto lines = writer_->write_changed(*store_, now);
    ASSERT_TRUE(lines) << lines.error().message();
  }
  CheckpointCheck check() {
    std::ifstream in(file());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto checked = check_checkpoints(*store_, text, pub_.get());
    EXPECT_TRUE(checked) << checked.error().message();
    return checked ? *checked : CheckpointCheck{};
  }
  void reopen() {
    store_.reset();
    auto s = Store::open(data_.path(), options_);
    ASSERT_TRUE(s) << s.error().message();
    store_ = std::move(*s);
  }
  // Runs SQL with text parameters (?1, ?2, ...) on the database, behind the stopped store's back.
  void raw(const std::string& sql, const std::vector<std::string>& params = {},
           std::optional<int64_t> seq = std::nullopt) {
    auto db = testing::raw_connection(options_, data_.path());
    ASSERT_TRUE(db) << db.error().message();
    auto st = (*db)->prepare(sql);
    ASSERT_TRUE(st) << st.error().message();
    int i = 1;
    for (const auto& p : params) st->bind(i++, p);
    if (seq) st->bind(i, *seq);
    auto ran = st->run();
    ASSERT_TRUE(ran) << sql << ": " << ran.error().message();
  }

  // The forgery: the tenant's records and jobs deleted, one retention record
  // claiming them (`json`, through `through` with the signed `head`), and the
  // chain head pointing at it. The store is stopped meanwhile.
  void forge(int64_t through, const std::string& head, const std::string& json) {
    store_.reset();
    raw("DELETE FROM records WHERE tenant_id = ?1", {tenant_});
    raw("DELETE FROM jobs WHERE tenant_id = ?1", {tenant_});
    const std::string hash = record_hash(head, json);
    raw("INSERT INTO records (tenant_id, job_id, prev_hash, hash, json, created_at, seq) "
        "VALUES (?1, '', ?2, ?3, ?4, ?5, ?6)",
        {tenant_, head, hash, json, jobs::now_rfc3339()}, through + 1);
    raw("UPDATE chain_heads SET hash = ?2, seq = ?3 WHERE tenant_id = ?1", {tenant_, hash},
        through + 1);
    reopen();
  }

  std::string key_path() const { return keys_.path() + "/checkpoint.pem"; }
  std::string file() const { return keys_.path() + "/checkpoints.jsonl"; }

  TempDir data_, keys_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string tenant_, other_;
  EvpKey key_, pub_;
  std::optional<service::CheckpointWriter> writer_;
};

TEST_P(RetentionForgery, ForgedRemovalOfCheckpointedRecordsIsRefused) {
  // Records seconds old, checkpointed as they come: 4 checkpoints.
  std::vector<std::string> removed_jobs;
  for (int i = 0; i < 3; ++i) {
    removed_jobs.push_back(job(tenant_, jobs::now_rfc3339()));
    checkpoint(jobs::now_rfc3339());
  }
  job(other_, jobs::now_rfc3339());
  checkpoint(jobs::now_rfc3339());
  CheckpointCheck before = check();
  EXPECT_EQ(before.checked, 4);
  EXPECT_TRUE(before.problems.empty()) << joined(before.problems);
  auto heads = store_->chain_heads();
  ASSERT_TRUE(heads);
  const ChainHead signed_head =
      heads->at(tenant_);  // what the last checkpoint of the tenant signed
  ASSERT_EQ(signed_head.seq, 3);

  forge(signed_head.seq, signed_head.hash,
        retention_record_json(removed_jobs, signed_head.seq, signed_head.hash));
  // The chain alone is consistent: that is the attack.
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << joined(report->problems);
  // The checkpoints find it: no signature covers the removal.
  CheckpointCheck after = check();
  EXPECT_EQ(after.checked, 4);
  ASSERT_EQ(after.problems.size(), 1u) << joined(after.problems);
  EXPECT_EQ(
      after.problems[0],
      "tenant " + tenant_ +
          ": retention record at seq 4 (removing through seq 3) is not signed "
          "by the checkpoint key (a removal after the tenant's first checkpoint, seq 1, must be: "
          "this one was forged, or made by a service without checkpoint_key)");
}

TEST_P(RetentionForgery, AForgedRemovalThatNamesAPolicyIsRefusedForItsAgeEvenWithoutTheKey) {
  std::vector<std::string> removed_jobs;
  std::string newest;
  for (int i = 0; i < 2; ++i) {
    newest = jobs::now_rfc3339();
    removed_jobs.push_back(job(tenant_, newest));
    checkpoint(jobs::now_rfc3339());
  }
  auto heads = store_->chain_heads();
  ASSERT_TRUE(heads);
  const ChainHead head = heads->at(tenant_);
  RetentionClaim claim;
  claim.removed_jobs = removed_jobs;
  claim.removed_through_seq = head.seq;
  claim.last_removed_hash = head.hash;
  claim.removed_through_time = newest;
  claim.retention_days = 30;
  claim.at = jobs::now_rfc3339();
  // Signed by some key, but not the checkpoint key.
  EvpKey forger = new_key();
  auto json = retention_record_text(tenant_, claim, forger.get());
  ASSERT_TRUE(json);
  forge(head.seq, head.hash, *json);
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_FALSE(report->ok);
  EXPECT_TRUE(has(report->problems, "record seq 3 (retention)", "younger than the policy allows"))
      << joined(report->problems);
  CheckpointCheck after = check();
  EXPECT_TRUE(has(after.problems, "retention record at seq 3", "not by the given key"))
      << joined(after.problems);
}

TEST_P(RetentionForgery, TheServicesOwnSignedRetentionPassesAndAnUnsignedOneDoesNot) {
  // Old records (January), checkpointed; retention on 2026-03-01 under 30 days.
  job(tenant_, "2026-01-05T10:00:00.000Z");
  job(tenant_, "2026-01-06T10:00:00.000Z");
  checkpoint("2026-01-06T11:00:00.000Z");
  job(tenant_, "2026-02-20T10:00:00.000Z");
  checkpoint("2026-02-20T11:00:00.000Z");
  auto removed = store_->remove_older_than("2026-01-30T00:00:00.000Z", "2026-03-01T00:00:00.000Z",
                                           {30, writer_->key()});
  ASSERT_TRUE(removed) << removed.error().message();
  EXPECT_EQ(*removed, 2u);
  checkpoint("2026-03-01T00:05:00.000Z");
  auto records = store_->retention_records(tenant_);
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 1u);
  auto claim = parse_retention_claim((*records)[0].json);
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->removed_through_seq, 2);
  EXPECT_EQ(claim->removed_through_time, "2026-01-06T10:00:00.000Z");
  EXPECT_EQ(claim->retention_days, 30u);
  EXPECT_EQ(claim->at, "2026-03-01T00:00:00.000Z");
  auto report = store_->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << joined(report->problems);
  CheckpointCheck ok = check();
  EXPECT_EQ(ok.checked, 3);  // the one at seq 2 compares with the retention record's last hash
  EXPECT_TRUE(ok.problems.empty()) << joined(ok.problems);

  // A service without checkpoint_key removes more: unsigned, after the first checkpoint.
  ASSERT_TRUE(
      store_->remove_older_than("2026-02-25T00:00:00.000Z", "2026-03-30T00:00:00.000Z", {30}));
  CheckpointCheck unsigned_removal = check();
  EXPECT_TRUE(has(unsigned_removal.problems, "retention record at seq 5 (removing through seq 3)",
                  "is not signed by the checkpoint key"))
      << joined(unsigned_removal.problems);
}

AIRLOCK_STORE_BACKENDS(RetentionForgery);

}  // namespace
}  // namespace airlock::store
