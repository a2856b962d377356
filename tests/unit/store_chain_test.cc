// Store: the per-tenant record chain, tampering, retention, and verify.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "store/chain.h"
#include "store/store.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

std::string at(int day) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "2026-01-%02dT12:00:00.000Z", day);
  return buf;
}

// Runs SQL on the database file behind the store's back, as an attacker or a
// broken disk would. Returns the error text, "" on success.
std::string raw_exec(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return "open failed";
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = rc == SQLITE_OK ? "" : (err ? err : "error");
  sqlite3_free(err);
  sqlite3_close(db);
  return msg;
}

bool mentions(const VerifyReport& report, const std::string& a, const std::string& b = "") {
  for (const auto& p : report.problems)
    if (p.find(a) != std::string::npos && p.find(b) != std::string::npos) return true;
  return false;
}

class StoreChain : public ::testing::Test {
 protected:
  void SetUp() override { reopen(); }

  void reopen() {
    store_.reset();
    auto s = Store::open(tmp_.path());
    ASSERT_TRUE(s) << s.error().message();
    store_ = std::move(*s);
    if (a_.empty()) {
      a_ = store_->create_tenant("acme", {})->id;
      b_ = store_->create_tenant("globex", {})->id;
    }
  }

  // A finished job; its record names it and a day.
  StoredRecord job(const std::string& tenant, int day,
                   const std::vector<ArtifactRow>& artifacts = {}) {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k";
    row.request_json = "{}";
    row.created_at = at(day);
    auto created = store_->create_job(row);
    EXPECT_TRUE(created);
    nlohmann::json rec = {{"id", created->first.id}, {"outcome", "succeeded"}, {"day", day}};
    auto stored = store_->finish_job(created->first.id, "succeeded", at(day), rec.dump(), artifacts);
    EXPECT_TRUE(stored) << stored.error().message();
    return *stored;
  }

  VerifyReport verify() {
    auto report = store_->verify();
    EXPECT_TRUE(report) << report.error().message();
    return *report;
  }

  std::string db() const { return tmp_.path() + "/airlock.db"; }

  TempDir tmp_;
  std::unique_ptr<Store> store_;
  std::string a_, b_;
};

TEST_F(StoreChain, ThreeRecordsLinkAndVerify) {
  StoredRecord r1 = job(a_, 1);
  StoredRecord r2 = job(a_, 2);
  StoredRecord other = job(b_, 2);
  StoredRecord r3 = job(a_, 3);
  EXPECT_EQ(r1.seq, 1);
  EXPECT_EQ(r2.seq, 2);
  EXPECT_EQ(r3.seq, 3);
  EXPECT_EQ(other.seq, 1);  // one chain per tenant
  EXPECT_EQ(r1.prev_hash, std::string(64, '0'));
  EXPECT_EQ(r2.prev_hash, r1.hash);
  EXPECT_EQ(r3.prev_hash, r2.hash);
  EXPECT_EQ(r2.hash, Sha256::of(r1.hash + "\n" + r2.json));

  auto fetched = store_->record(a_, r2.job_id);
  ASSERT_TRUE(fetched && *fetched);
  EXPECT_EQ((*fetched)->hash, r2.hash);
  EXPECT_EQ((*fetched)->json, r2.json);

  VerifyReport report = verify();
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.records, 4u);
  EXPECT_TRUE(report.problems.empty());
}

TEST_F(StoreChain, UpdatingARecordIsRefusedByTheDatabase) {
  StoredRecord r = job(a_, 1);
  store_.reset();
  std::string err = raw_exec(db(), "UPDATE records SET json = '{}' WHERE seq = 1");
  EXPECT_NE(err.find("append-only"), std::string::npos) << err;
  reopen();
  EXPECT_EQ((*store_->record(a_, r.job_id))->json, r.json);
}

TEST_F(StoreChain, VerifyReportsAChangedRecord) {
  job(a_, 1);
  StoredRecord r2 = job(a_, 2);
  job(a_, 3);
  store_.reset();
  ASSERT_EQ(raw_exec(db(), "DROP TRIGGER records_append_only; "
                           "UPDATE records SET json = replace(json, 'succeeded', 'failed') "
                           "WHERE seq = 2 AND tenant_id = '" + a_ + "'"),
            "");
  reopen();
  VerifyReport report = verify();
  EXPECT_FALSE(report.ok);
  ASSERT_EQ(report.problems.size(), 1u) << report.problems[0];
  EXPECT_EQ(report.problems[0],
            "tenant " + a_ + ": record seq 2 (job " + r2.job_id + ") hash mismatch");
}

TEST_F(StoreChain, VerifyReportsARecomputedHashAsABrokenLink) {
  job(a_, 1);
  job(a_, 2);
  job(a_, 3);
  store_.reset();
  // The attacker fixes up the changed record's own hash, but not the next link.
  ASSERT_EQ(raw_exec(db(), "DROP TRIGGER records_append_only; "
                           "UPDATE records SET json = '{}', hash = '" +
                               record_hash(std::string(64, '0'), "{}") +
                               "', prev_hash = '" + std::string(64, '0') +
                               "' WHERE seq = 1 AND tenant_id = '" + a_ + "'"),
            "");
  reopen();
  VerifyReport report = verify();
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(mentions(report, "record seq 2", "broken link")) << report.problems[0];
}

TEST_F(StoreChain, VerifyReportsARemovedRecordAndARemovedTail) {
  job(a_, 1);
  job(a_, 2);
  job(a_, 3);
  job(a_, 4);
  job(b_, 1);
  job(b_, 2);
  store_.reset();
  ASSERT_EQ(raw_exec(db(), "DELETE FROM records WHERE seq = 2 AND tenant_id = '" + a_ + "'"), "");
  ASSERT_EQ(raw_exec(db(), "DELETE FROM records WHERE seq = 2 AND tenant_id = '" + b_ + "'"), "");
  reopen();
  VerifyReport report = verify();
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(mentions(report, "tenant " + a_ + ": records seq 2 missing")) << report.problems[0];
  EXPECT_TRUE(mentions(report, "tenant " + b_, "missing at the end"));
  EXPECT_TRUE(mentions(report, "finished but its record is missing"));
  EXPECT_EQ(report.records, 4u);
}

TEST_F(StoreChain, RetentionRemovesAPrefixAndTheChainStillVerifies) {
  std::string old_bytes = "old output", shared_bytes = "shared output";
  std::string old_sha = Sha256::of(old_bytes), shared_sha = Sha256::of(shared_bytes);
  for (const auto& [name, bytes] : {std::pair{"old", old_bytes}, {"shared", shared_bytes}}) {
    std::ofstream(tmp_.path() + "/" + name) << bytes;
    ASSERT_TRUE(store_->put_artifact(tmp_.path() + "/" + name, Sha256::of(bytes)));
  }
  StoredRecord r1 = job(a_, 1, {{"", "a.txt", old_sha, "txt", old_bytes.size()},
                                {"", "b.txt", shared_sha, "txt", shared_bytes.size()}});
  StoredRecord r2 = job(a_, 2);
  StoredRecord r3 = job(a_, 10, {{"", "b.txt", shared_sha, "txt", shared_bytes.size()}});
  StoredRecord r4 = job(a_, 3);  // old, but after a newer one in the chain: kept for now
  StoredRecord b1 = job(b_, 11);
  ASSERT_TRUE(store_->publish(r1.job_id, "a.txt", "k", at(4)));

  auto removed = store_->remove_older_than(at(5), at(20));
  ASSERT_TRUE(removed) << removed.error().message();
  EXPECT_EQ(*removed, 2u);
  EXPECT_FALSE(*store_->record(a_, r1.job_id));
  EXPECT_FALSE(*store_->job(a_, r1.job_id));
  EXPECT_FALSE(*store_->job(a_, r2.job_id));
  EXPECT_TRUE(store_->artifacts(r1.job_id)->empty());
  EXPECT_TRUE(store_->publications(r1.job_id)->empty());
  EXPECT_TRUE(*store_->job(a_, r3.job_id));
  EXPECT_TRUE(*store_->job(a_, r4.job_id));
  EXPECT_TRUE(*store_->job(b_, b1.job_id));
  // The unreferenced file is gone; the one a kept job still names stays.
  EXPECT_FALSE(std::filesystem::exists(store_->artifact_path(old_sha)));
  EXPECT_TRUE(std::filesystem::exists(store_->artifact_path(shared_sha)));

  auto page = store_->jobs(a_, {});
  ASSERT_EQ(page->jobs.size(), 2u);
  VerifyReport report = verify();
  EXPECT_TRUE(report.ok) << report.problems[0];
  EXPECT_EQ(report.records, 4u);  // r3, r4, the retention record, b1

  // The retention record continues the chain and says what it removed.
  auto usage = store_->usage(a_, "", "");
  EXPECT_EQ(usage->jobs, 2u);
  store_.reset();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT seq, prev_hash, json, created_at FROM records "
                                    "WHERE job_id = '' ",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), 5);
  EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), r4.hash);
  auto json = nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2)));
  EXPECT_EQ(json["kind"], "retention");
  EXPECT_EQ(json["removed_jobs"], (std::vector<std::string>{r1.job_id, r2.job_id}));
  EXPECT_EQ(json["removed_through_seq"], 2);
  EXPECT_EQ(json["last_removed_hash"], r2.hash);
  EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)), at(20));
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  reopen();

  // Later: everything old goes, including the first retention record; the
  // chain goes on across both gaps.
  StoredRecord r5 = job(a_, 25);
  removed = store_->remove_older_than(at(24), at(26));
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 3u);  // r3, r4 of acme and b1 of globex
  EXPECT_FALSE(std::filesystem::exists(store_->artifact_path(shared_sha)));
  report = verify();
  EXPECT_TRUE(report.ok) << report.problems[0];
  EXPECT_EQ(report.records, 3u);  // r5, acme's and globex's retention records
  StoredRecord r6 = job(a_, 27);
  EXPECT_EQ(r6.seq, 8);
  EXPECT_TRUE(verify().ok);

  // Nothing more to remove: no new retention record.
  removed = store_->remove_older_than(at(24), at(28));
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 0u);
  EXPECT_EQ(verify().records, 4u);
  EXPECT_EQ((*store_->record(a_, r5.job_id))->seq, 6);
}

TEST_F(StoreChain, VerifyReportsARemovedRetentionRecordAndACoveredGap) {
  job(a_, 1);
  job(a_, 2);
  job(a_, 10);
  ASSERT_EQ(*store_->remove_older_than(at(5), at(20)), 2u);
  ASSERT_TRUE(verify().ok);
  store_.reset();
  ASSERT_EQ(raw_exec(db(), "DELETE FROM records WHERE job_id = ''"), "");
  reopen();
  VerifyReport report = verify();
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(mentions(report, "records seq 1..2 missing"));
  EXPECT_TRUE(mentions(report, "missing at the end"));
}

TEST(ChainVerifier, FindsEachKindOfDamage) {
  auto link = [](int64_t seq, const std::string& prev, const std::string& json,
                 const std::string& job = "j") {
    return StoredRecord{job + std::to_string(seq), "t", seq, prev, record_hash(prev, json), json,
                        ""};
  };
  StoredRecord r1 = link(1, std::string(kZeroHash), "{\"a\":1}");
  StoredRecord r2 = link(2, r1.hash, "{\"a\":2}");
  StoredRecord r3 = link(3, r2.hash, "{\"a\":3}");
  {
    ChainVerifier v("t");
    for (const auto& r : {r1, r2, r3}) v.add(r);
    v.finish(ChainHead{3, r3.hash});
    EXPECT_TRUE(v.problems().empty());
    EXPECT_EQ(v.records(), 3u);
  }
  {
    ChainVerifier v("t");
    StoredRecord bad_first = link(1, std::string(64, '1'), "{}");
    v.add(bad_first);
    v.finish(ChainHead{1, bad_first.hash});
    ASSERT_EQ(v.problems().size(), 1u);
    EXPECT_NE(v.problems()[0].find("prev_hash is not zero"), std::string::npos);
  }
  {
    ChainVerifier v("t");
    v.add(r1);
    v.add(r2);
    v.add(r3);
    v.finish(ChainHead{3, std::string(64, 'f')});  // head moved: a rewritten tail
    ASSERT_EQ(v.problems().size(), 1u);
    EXPECT_NE(v.problems()[0].find("does not match the chain head"), std::string::npos);
  }
  {
    ChainVerifier v("t");
    v.add(r1);
    v.finish(std::nullopt);
    ASSERT_EQ(v.problems().size(), 1u);
  }
  {
    // A retention record that claims to cover itself is not trusted.
    StoredRecord ret = link(2, r1.hash, retention_record_json({"x"}, 5, r1.hash), "");
    ret.job_id = "";
    ChainVerifier v("t");
    v.note_retention(ret);
    v.add(r1);
    v.add(ret);
    v.finish(ChainHead{2, ret.hash});
    ASSERT_EQ(v.problems().size(), 1u);
    EXPECT_NE(v.problems()[0].find("not before it"), std::string::npos);
  }
}

}  // namespace
}  // namespace airlock::store

namespace airlock::store {
namespace {

TEST_F(StoreChain, DataRequestAnswersAreChainedOnceEach) {
  StoredRecord asked = job(a_, 1);
  DataRequestAnswer refusal{a_, asked.job_id, "r1", AnswerState::kRefused, "", "not shared", "k", at(2)};
  ASSERT_TRUE(store_->answer_data_requests({refusal}));
  DataRequestAnswer by_job{a_, asked.job_id, "r2", AnswerState::kAnswered, "follow", "", "k", at(2)};
  DataRequestAnswer again = refusal;
  again.reason = "twice";
  auto twice = store_->answer_data_requests({by_job, again});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().kind, ErrorKind::kRefused);
  EXPECT_EQ(twice.error().what, "request r1 of job " + asked.job_id + " is already refused");
  auto kept = store_->data_request_answers(a_, asked.job_id);
  ASSERT_TRUE(kept);
  ASSERT_EQ(kept->size(), 1u) << "all or none: r2 was not answered either";
  EXPECT_EQ((*kept)[0].reason, "not shared");
  EXPECT_TRUE(store_->data_request_answers(b_, asked.job_id)->empty()) << "another tenant sees none";
  ASSERT_TRUE(store_->answer_data_requests({by_job}));

  VerifyReport report = verify();
  EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems[0]);
  EXPECT_EQ(report.records, 3u);
  // The answer is a link of the chain: changing it is caught.
  ASSERT_EQ(raw_exec(db(), "DROP TRIGGER records_append_only; UPDATE records SET json = replace(json, "
                           "'not shared', 'shared') WHERE seq = 2"),
            "");
  EXPECT_TRUE(mentions(verify(), "(data request answer)", "hash mismatch"));
}

TEST(DataRequestAnswerRecord, NamesTheJobTheRequestAndTheDecision) {
  auto refused = nlohmann::json::parse(data_request_answer_record_json(
      {"t", "j1", "r1", AnswerState::kRefused, "", "no", "k", "2026-12-01T20:00:00.000Z"}));
  EXPECT_EQ(refused, nlohmann::json({{"kind", "data_request_answer"}, {"job_id", "j1"}, {"request_id", "r1"},
                                     {"answer", "refused"}, {"reason", "no"}, {"key_id", "k"},
                                     {"at", "2026-12-01T20:00:00.000Z"}}));
  auto answered = nlohmann::json::parse(
      data_request_answer_record_json({"t", "j1", "r2", AnswerState::kAnswered, "j2", "", "k", "at"}));
  EXPECT_EQ(answered["answer"], "job");
  EXPECT_EQ(answered["by_job"], "j2");
  EXPECT_FALSE(answered.contains("reason"));
  EXPECT_TRUE(is_data_request_answer_record(answered.dump()));
  EXPECT_FALSE(is_data_request_answer_record(R"({"kind": "retention"})"));
}

}  // namespace
}  // namespace airlock::store
