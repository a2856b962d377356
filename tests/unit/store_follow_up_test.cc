// Store: a follow-up job and the data requests it answers are created in one
// transaction (docs/data-requests.md): a request answered already refuses the
// follow-up and leaves no job, no answer and no record; an idempotent replay
// of the follow-up returns it and writes nothing. On both backends.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

class StoreFollowUp : public ::testing::TestWithParam<testing::Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path(), store_, options_);
    tenant_ = store_->create_tenant("acme", {})->id;
    // The first job: it asked (r1, r2) and ended input_requested.
    JobRow row;
    row.tenant_id = tenant_;
    row.key_id = "k1";
    row.request_json = R"({"command":["true"]})";
    auto created = store_->create_job(row);
    ASSERT_TRUE(created) << created.error().message();
    first_ = created->first.id;
    nlohmann::json rec = {{"id", first_}, {"outcome", "input_requested"}};
    ASSERT_TRUE(store_->finish_job(first_, "input_requested", "", rec.dump(), {}));
  }

  JobRow follow_up(const std::string& idempotency_key = "") {
    JobRow row;
    row.tenant_id = tenant_;
    row.key_id = "k1";
    row.request_json =
        R"({"command":["true"],"answers":{"job":")" + first_ + R"(","requests":["r1"]}})";
    row.idempotency_key = idempotency_key;
    return row;
  }

  std::vector<DataRequestAnswer> answering(const std::vector<std::string>& ids) {
    std::vector<DataRequestAnswer> out;
    for (const auto& id : ids)
      out.push_back(
          {tenant_, first_, id, AnswerState::kAnswered, "", "", "k1", "2026-01-01T00:00:01.000Z"});
    return out;
  }

  size_t jobs() {
    JobFilter f;
    f.limit = 100;
    auto page = store_->jobs(tenant_, f);
    EXPECT_TRUE(page);
    return page ? page->jobs.size() : 0;
  }

  uint64_t records() {
    auto report = store_->verify();
    EXPECT_TRUE(report && report->ok);
    return report ? report->records : 0;
  }

  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string tenant_, first_;
};

TEST_P(StoreFollowUp, TheAnswersAreWrittenWithTheJobAndNameIt) {
  auto created = store_->create_job(follow_up(), answering({"r1", "r2"}));
  ASSERT_TRUE(created) << created.error().message();
  ASSERT_TRUE(created->second);
  auto answers = store_->data_request_answers(tenant_, first_);
  ASSERT_TRUE(answers);
  ASSERT_EQ(answers->size(), 2u);
  for (const auto& a : *answers) EXPECT_EQ(a.by_job, created->first.id) << a.request_id;
  EXPECT_EQ(records(), 3u) << "the first job's record and one per answer";
}

TEST_P(StoreFollowUp, AnAnsweredRequestRefusesTheFollowUpAndLeavesNothing) {
  auto winner = store_->create_job(follow_up(), answering({"r1"}));
  ASSERT_TRUE(winner) << winner.error().message();
  ASSERT_EQ(jobs(), 2u);
  ASSERT_EQ(records(), 2u);
  // r2 is open, r1 is not: all or none.
  auto loser = store_->create_job(follow_up(), answering({"r2", "r1"}));
  ASSERT_FALSE(loser);
  EXPECT_EQ(loser.error().kind, ErrorKind::kRefused);
  EXPECT_EQ(loser.error().what,
            "request r1 of job " + first_ + " is already answered by job " + winner->first.id);
  EXPECT_EQ(jobs(), 2u) << "the refused follow-up left a job";
  EXPECT_EQ(records(), 2u) << "the refused follow-up left a record";
  auto answers = store_->data_request_answers(tenant_, first_);
  ASSERT_TRUE(answers);
  ASSERT_EQ(answers->size(), 1u) << "r2 was answered by a job that does not exist";
  EXPECT_EQ((*answers)[0].by_job, winner->first.id);
  // A refusal refuses a follow-up the same way.
  ASSERT_TRUE(store_->answer_data_requests({{tenant_, first_, "r2", AnswerState::kRefused, "",
                                             "not shared", "k1", "2026-01-01T00:00:02.000Z"}}));
  auto after_refusal = store_->create_job(follow_up(), answering({"r2"}));
  ASSERT_FALSE(after_refusal);
  EXPECT_EQ(after_refusal.error().what, "request r2 of job " + first_ + " is already refused");
  EXPECT_EQ(jobs(), 2u);
}

TEST_P(StoreFollowUp, AReplayWithTheIdempotencyKeyReturnsTheFollowUpAndWritesNothing) {
  auto first = store_->create_job(follow_up("retry-1"), answering({"r1"}));
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_TRUE(first->second);
  auto again = store_->create_job(follow_up("retry-1"), answering({"r1"}));
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_FALSE(again->second);
  EXPECT_EQ(again->first.id, first->first.id);
  EXPECT_EQ(store_->data_request_answers(tenant_, first_)->size(), 1u);
  EXPECT_EQ(records(), 2u);
}

AIRLOCK_STORE_BACKENDS(StoreFollowUp);

}  // namespace
}  // namespace airlock::store
