// Store: jobs (idempotency, states, tenant isolation, pagination), usage, publication.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_backend.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::Backend;
using testing::TempDir;

// 2026-01-01T00:MM:SS.000Z for i seconds after midnight (i < 3600).
std::string at(int i) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "2026-01-01T00:%02d:%02d.000Z", i / 60, i % 60);
  return buf;
}

class StoreJobs : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    AIRLOCK_OPEN_STORE_ON_BACKEND(tmp_.path(), store_, options_);
    a_ = store_->create_tenant("acme", {})->id;
    b_ = store_->create_tenant("globex", {})->id;
  }

  JobRow new_job(const std::string& tenant, const std::string& created_at = "",
                 const std::string& idempotency_key = "") {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k1";
    row.request_json = R"({"command":["true"]})";
    row.created_at = created_at;
    row.idempotency_key = idempotency_key;
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    EXPECT_TRUE(created->second);
    return created->first;
  }

  StoredRecord finish(const std::string& job_id, const std::string& outcome,
                      const std::string& finished_at, uint64_t cpu_ms = 0, uint64_t wall_ms = 0,
                      uint64_t peak = 0) {
    nlohmann::json rec = {{"id", job_id},
                          {"outcome", outcome},
                          {"usage", {{"cpu_ms", cpu_ms}, {"wall_ms", wall_ms},
                                     {"peak_memory_bytes", peak}}}};
    auto stored = store_->finish_job(job_id, outcome, finished_at, rec.dump(), {});
    EXPECT_TRUE(stored) << stored.error().message();
    return stored ? *stored : StoredRecord{};
  }

  TempDir tmp_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
  std::string a_, b_;
};

TEST_P(StoreJobs, IdempotencyKeyReturnsTheSameJobPerTenant) {
  JobRow first = new_job(a_, "", "retry-1");
  JobRow again;
  again.tenant_id = a_;
  again.key_id = "k2";
  again.request_json = R"({"command":["false"]})";
  again.idempotency_key = "retry-1";
  auto second = store_->create_job(again);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->second);
  EXPECT_EQ(second->first.id, first.id);
  EXPECT_EQ(second->first.request_json, first.request_json);  // the earlier job stands

  // The same key in another tenant is another job; no key is never a replay.
  JobRow other = new_job(b_, "", "retry-1");
  EXPECT_NE(other.id, first.id);
  EXPECT_NE(new_job(a_).id, new_job(a_).id);
  EXPECT_EQ(store_->jobs(a_, {})->jobs.size(), 3u);
}

TEST_P(StoreJobs, StatesMoveQueuedRunningFinishedOnce) {
  JobRow job = new_job(a_);
  EXPECT_EQ(job.id.size(), 16u);
  EXPECT_EQ(job.state, JobState::kQueued);
  auto active = store_->active_jobs(a_);
  ASSERT_TRUE(active);
  EXPECT_EQ(*active, (std::pair{1, 0}));

  ASSERT_TRUE(store_->mark_running(job.id, 4242, at(5)));
  EXPECT_FALSE(store_->mark_running(job.id, 1, at(6)));  // not queued any more
  EXPECT_FALSE(store_->mark_running("nope", 1, at(6)));
  auto running = store_->job(a_, job.id);
  ASSERT_TRUE(running && *running);
  EXPECT_EQ((*running)->state, JobState::kRunning);
  EXPECT_EQ((*running)->pid, 4242);
  EXPECT_EQ((*running)->started_at, at(5));
  EXPECT_EQ(*store_->active_jobs(a_), (std::pair{0, 1}));
  EXPECT_EQ(store_->unfinished_jobs()->size(), 1u);

  EXPECT_FALSE(store_->finish_job(job.id, "succeeded", at(9), "not json", {}));
  EXPECT_FALSE(store_->finish_job(job.id, "", at(9), "{}", {}));
  StoredRecord rec = finish(job.id, "succeeded", at(9));
  EXPECT_EQ(rec.seq, 1);
  EXPECT_EQ(rec.created_at, at(9));
  EXPECT_FALSE(store_->finish_job(job.id, "failed", at(10), "{}", {}));  // never twice
  EXPECT_FALSE(store_->finish_job("nope", "failed", at(10), "{}", {}));

  auto done = store_->job(a_, job.id);
  ASSERT_TRUE(done && *done);
  EXPECT_EQ((*done)->state, JobState::kFinished);
  EXPECT_EQ((*done)->outcome, "succeeded");
  EXPECT_EQ((*done)->finished_at, at(9));
  EXPECT_TRUE(store_->unfinished_jobs()->empty());
  EXPECT_EQ(*store_->active_jobs(a_), (std::pair{0, 0}));
}

TEST_P(StoreJobs, UnfinishedJobsSpanTenantsOldestFirst) {
  JobRow q = new_job(a_, at(1));
  JobRow r = new_job(b_, at(2));
  JobRow f = new_job(a_, at(3));
  ASSERT_TRUE(store_->mark_running(r.id, 7, at(4)));
  finish(f.id, "failed", at(5));
  auto left = store_->unfinished_jobs();
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].id, q.id);
  EXPECT_EQ((*left)[1].id, r.id);
  EXPECT_EQ((*left)[1].pid, 7);
}

TEST_P(StoreJobs, AnotherTenantsJobRecordAndFileDoNotExist) {
  JobRow job = new_job(a_);
  finish(job.id, "succeeded", at(1));
  // add_file syncs the upload before its row commits: the file must exist.
  std::string path = tmp_.path() + "/in.csv";
  std::ofstream(path) << "a,b";
  FileRow file{"", a_, "in.csv", 3, std::string(64, 'c'), path, ""};
  auto added = store_->add_file(file);
  ASSERT_TRUE(added);

  auto j = store_->job(b_, job.id);
  ASSERT_TRUE(j);
  EXPECT_FALSE(*j);
  auto r = store_->record(b_, job.id);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  auto f = store_->file(b_, added->id);
  ASSERT_TRUE(f);
  EXPECT_FALSE(*f);
  EXPECT_TRUE(store_->jobs(b_, {})->jobs.empty());
  EXPECT_EQ(store_->usage(b_, "", "")->jobs, 0u);

  // ... and the owner sees all three.
  EXPECT_TRUE(*store_->job(a_, job.id));
  EXPECT_TRUE(*store_->record(a_, job.id));
  EXPECT_TRUE(*store_->file(a_, added->id));
  EXPECT_FALSE(*store_->record(a_, ""));
}

TEST_P(StoreJobs, PagesHaveNoDuplicatesOrGapsWhileJobsAreAdded) {
  // Ties in created_at (three jobs per second) exercise the tie-break.
  std::vector<std::string> expected;  // newest first
  for (int i = 0; i < 30; ++i) expected.insert(expected.begin(), new_job(a_, at(100 + i / 3)).id);
  new_job(b_, at(200));  // another tenant's job never shows

  JobFilter filter;
  filter.limit = 7;
  std::vector<std::string> seen;
  int pages = 0;
  while (true) {
    auto page = store_->jobs(a_, filter);
    ASSERT_TRUE(page) << page.error().message();
    ++pages;
    EXPECT_LE(page->jobs.size(), 7u);
    for (const auto& j : page->jobs) seen.push_back(j.id);
    // New jobs arrive between pages, newer and at the same time as the last seen.
    new_job(a_, at(300 + pages));
    new_job(a_, page->jobs.empty() ? at(1) : page->jobs.back().created_at);
    if (page->next_cursor.empty()) break;
    filter.cursor = page->next_cursor;
  }
  EXPECT_EQ(pages, 5);
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
}

TEST_P(StoreJobs, FiltersByStateOutcomeAndTime) {
  JobRow j1 = new_job(a_, at(1));
  JobRow j2 = new_job(a_, at(2));
  JobRow j3 = new_job(a_, at(3));
  JobRow j4 = new_job(a_, at(4));
  finish(j1.id, "succeeded", at(10));
  finish(j2.id, "failed", at(11));
  ASSERT_TRUE(store_->mark_running(j3.id, 1, at(12)));

  auto ids = [&](JobFilter f) {
    std::vector<std::string> out;
    auto page = store_->jobs(a_, f);
    for (const auto& j : page->jobs) out.push_back(j.id);
    return out;
  };
  JobFilter f;
  f.state = JobState::kFinished;
  EXPECT_EQ(ids(f), (std::vector<std::string>{j2.id, j1.id}));
  f = {};
  f.state = JobState::kQueued;
  EXPECT_EQ(ids(f), (std::vector<std::string>{j4.id}));
  f = {};
  f.outcome = "succeeded";
  EXPECT_EQ(ids(f), (std::vector<std::string>{j1.id}));
  f = {};
  f.created_after = at(1);
  f.created_before = at(4);
  EXPECT_EQ(ids(f), (std::vector<std::string>{j3.id, j2.id}));
  f = {};
  f.limit = 0;  // the default
  EXPECT_EQ(ids(f).size(), 4u);

  f = {};
  f.cursor = "not a cursor";
  EXPECT_FALSE(store_->jobs(a_, f));
}

TEST_P(StoreJobs, ImageFilterAndEveryTenantListing) {
  auto job_on = [&](const std::string& tenant, const std::string& image) {
    JobRow row;
    row.tenant_id = tenant;
    row.key_id = "k1";
    row.request_json = nlohmann::json{{"command", {"true"}}, {"image", image}}.dump();
    auto created = store_->create_job(row);
    EXPECT_TRUE(created) << created.error().message();
    return created->first.id;
  };
  std::string a_py = job_on(a_, "python@sha256:" + std::string(64, 'a'));
  std::string a_node = job_on(a_, "node");
  std::string b_py = job_on(b_, "python");
  job_on(b_, "pythonic");  // a longer name with the same prefix is another image

  auto ids = [](const JobPage& p) {
    std::set<std::string> out;
    for (const auto& j : p.jobs) out.insert(j.id);
    return out;
  };
  JobFilter py;
  py.image = "python";
  auto mine = store_->jobs(a_, py);
  ASSERT_TRUE(mine) << mine.error().message();
  EXPECT_EQ(ids(*mine), std::set<std::string>{a_py});
  auto every = store_->jobs_of_every_tenant(py);
  ASSERT_TRUE(every) << every.error().message();
  EXPECT_EQ(ids(*every), (std::set<std::string>{a_py, b_py}));
  JobFilter node;
  node.image = "node";
  auto nodes = store_->jobs_of_every_tenant(node);
  ASSERT_TRUE(nodes);
  EXPECT_EQ(ids(*nodes), std::set<std::string>{a_node});
  auto all = store_->jobs_of_every_tenant({});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->jobs.size(), 4u);

  // The tenant-scoped listing never widens to every tenant for an empty id.
  auto none = store_->jobs("", {});
  EXPECT_FALSE(none);
  // A job of any tenant is found only through the admin lookup.
  auto scoped = store_->job(a_, b_py);
  ASSERT_TRUE(scoped);
  EXPECT_FALSE(scoped->has_value());
  auto any = store_->job_of_any_tenant(b_py);
  ASSERT_TRUE(any && *any);
  EXPECT_EQ((*any)->tenant_id, b_);
}

TEST_P(StoreJobs, UsageSumsFinishedJobsInTheRange) {
  JobRow j1 = new_job(a_, at(1));
  JobRow j2 = new_job(a_, at(2));
  JobRow j3 = new_job(a_, at(3));
  JobRow j4 = new_job(a_, at(4));
  new_job(a_, at(5));  // still queued: not counted
  JobRow other = new_job(b_, at(6));
  finish(j1.id, "succeeded", at(10), 100, 200, 1000);
  finish(j2.id, "succeeded", at(20), 10, 20, 5000);
  finish(j3.id, "failed", at(30), 1, 2, 300);
  ASSERT_TRUE(store_->finish_job(j4.id, "sandbox_error", at(40), R"({"no":"usage"})", {}));
  finish(other.id, "succeeded", at(15), 999, 999, 999999);

  auto all = store_->usage(a_, "", "");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->jobs, 4u);
  EXPECT_EQ(all->cpu_ms, 111u);
  EXPECT_EQ(all->wall_ms, 222u);
  EXPECT_EQ(all->peak_memory_bytes, 5000u);
  EXPECT_EQ(all->by_outcome, (std::map<std::string, uint64_t>{
                                 {"failed", 1}, {"sandbox_error", 1}, {"succeeded", 2}}));

  auto range = store_->usage(a_, at(20), at(40));  // from inclusive, to exclusive
  ASSERT_TRUE(range);
  EXPECT_EQ(range->jobs, 2u);
  EXPECT_EQ(range->cpu_ms, 11u);
  EXPECT_EQ(range->peak_memory_bytes, 5000u);
  EXPECT_EQ(range->by_outcome, (std::map<std::string, uint64_t>{{"failed", 1}, {"succeeded", 1}}));
}

TEST_P(StoreJobs, PublishOnlyAnArtifactOfAFinishedJob) {
  JobRow job = new_job(a_);
  std::string sha(64, 'd');
  EXPECT_FALSE(store_->publish(job.id, "chart.png", "k1", at(1)));  // not finished, no artifact
  ASSERT_TRUE(store_->finish_job(job.id, "succeeded", at(2), "{}",
                                 {{"", "chart.png", sha, "png", 1234}}));
  auto arts = store_->artifacts(job.id);
  ASSERT_TRUE(arts);
  ASSERT_EQ(arts->size(), 1u);
  EXPECT_EQ((*arts)[0].job_id, job.id);
  EXPECT_EQ((*arts)[0].size, 1234u);

  EXPECT_FALSE(store_->publish(job.id, "other.png", "k1", at(3)));
  ASSERT_TRUE(store_->publish(job.id, "chart.png", "k1", at(3)));
  ASSERT_TRUE(store_->publish(job.id, "chart.png", "k2", at(4)));
  auto pubs = store_->publications(job.id);
  ASSERT_TRUE(pubs);
  EXPECT_EQ(*pubs, (std::vector<std::pair<std::string, std::string>>{
                       {"chart.png", "k1@" + at(3)}, {"chart.png", "k2@" + at(4)}}));
  EXPECT_TRUE(store_->publications("nope")->empty());
}

TEST_P(StoreJobs, FinishRefusesABadArtifactRowAndChangesNothing) {
  JobRow job = new_job(a_);
  EXPECT_FALSE(store_->finish_job(job.id, "succeeded", at(2), "{}", {{"", "x", "zz", "png", 1}}));
  // Two rows with one name violate the key: the whole transaction is undone.
  std::string sha(64, 'e');
  EXPECT_FALSE(store_->finish_job(job.id, "succeeded", at(2), "{}",
                                  {{"", "x", sha, "png", 1}, {"", "x", sha, "png", 1}}));
  auto row = store_->job(a_, job.id);
  EXPECT_EQ((*row)->state, JobState::kQueued);
  EXPECT_FALSE(*store_->record(a_, job.id));
  EXPECT_TRUE(store_->artifacts(job.id)->empty());
  EXPECT_TRUE(store_->verify()->ok);
  finish(job.id, "succeeded", at(3));
}

AIRLOCK_STORE_BACKENDS(StoreJobs);

}  // namespace
}  // namespace airlock::store
