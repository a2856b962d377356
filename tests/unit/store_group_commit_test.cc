// The store's group commit: many threads finishing jobs at once share
// transactions, every write is committed once and in order, the chains
// verify, and a write that is refused inside a shared batch loses none of the
// others. Also: what finish_job() returned survives a SIGKILL of the process.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store_test_util.h"

namespace airlock::store {
namespace {

using testing::TempDir;

std::string new_job(Store& store, const std::string& tenant) {
  JobRow row;
  row.tenant_id = tenant;
  row.key_id = "k";
  row.request_json = "{}";
  auto created = store.create_job(row);
  EXPECT_TRUE(created) << created.error().message();
  return created ? created->first.id : "";
}

// Another connection holding the write lock (as `airlock keys` could): the
// store's leader waits in BEGIN IMMEDIATE, so the writers behind it queue up.
class WriteLock {
 public:
  explicit WriteLock(const std::string& dir) {
    EXPECT_EQ(sqlite3_open((dir + "/airlock.db").c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  void release() {
    if (db_) {
      EXPECT_EQ(sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    }
    sqlite3_close(db_);
    db_ = nullptr;
  }
  ~WriteLock() { release(); }

 private:
  sqlite3* db_ = nullptr;
};

TEST(StoreGroupCommit, SixteenThreadsShareCommitsAndEveryWriteLandsOnceInOrder) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path(), StoreOptions{.max_batch = 64}));
  std::vector<std::string> tenants = {store->create_tenant("acme", {})->id, store->create_tenant("globex", {})->id};
  constexpr int kThreads = 16, kJobs = 25;
  std::vector<std::vector<std::string>> finished(kThreads);  // each thread's jobs, in the order it finished them
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const std::string& tenant = tenants[static_cast<size_t>(t) % tenants.size()];
      for (int i = 0; i < kJobs; ++i) {
        std::string id = new_job(*store, tenant);
        if (id.empty() || !store->mark_running(id, 100 + t, "")) {
          ++failures;
          continue;
        }
        nlohmann::json rec = {{"id", id}, {"thread", t}, {"i", i}};
        auto done = store->finish_job(id, "succeeded", "", rec.dump(), {});
        if (!done) ++failures;
        else finished[static_cast<size_t>(t)].push_back(id);
      }
    });
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures, 0);

  auto stats = store->commit_stats();
  // 3 writes per job (create, start, finish); 2 tenants made outside the queue.
  EXPECT_EQ(stats.writes, uint64_t{3} * kThreads * kJobs);
  EXPECT_GT(stats.largest, 1u) << "16 writers at once never shared a commit";
  EXPECT_LT(stats.batches, stats.writes);
  EXPECT_LE(stats.largest, 64u);
  std::printf("group commit: %llu writes in %llu commits (largest %zu)\n",
              static_cast<unsigned long long>(stats.writes), static_cast<unsigned long long>(stats.batches),
              stats.largest);

  auto report = store->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << (report->problems.empty() ? "" : report->problems[0]);
  EXPECT_EQ(report->records, uint64_t{kThreads} * kJobs);
  // In order: a thread's jobs have increasing seqs in their tenant's chain,
  // and each record is the job's own.
  for (int t = 0; t < kThreads; ++t) {
    int64_t last = 0;
    const std::string& tenant = tenants[static_cast<size_t>(t) % tenants.size()];
    for (size_t i = 0; i < finished[static_cast<size_t>(t)].size(); ++i) {
      const std::string& id = finished[static_cast<size_t>(t)][i];
      auto rec = store->record(tenant, id);
      ASSERT_TRUE(rec && *rec) << id;
      EXPECT_GT((*rec)->seq, last) << "thread " << t << " job " << i;
      last = (*rec)->seq;
      auto j = nlohmann::json::parse((*rec)->json);
      EXPECT_EQ(j["id"], id);
      EXPECT_EQ(j["i"], static_cast<int>(i));
    }
  }
  EXPECT_TRUE(store->unfinished_jobs()->empty());
}

// Writes queued behind a held lock commit as one batch; in it, a second
// finish of a finished job and a start of a job that is not queued are
// refused, each with its own reason, and every other write of the batch is
// committed.
TEST(StoreGroupCommit, ARefusedWriteInASharedBatchLosesNoneOfTheOthers) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path(), StoreOptions{.max_batch = 64}));
  std::string tenant = store->create_tenant("acme", {})->id;
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(new_job(*store, tenant));
  std::string done_before = new_job(*store, tenant);
  ASSERT_TRUE(store->finish_job(done_before, "succeeded", "", R"({"first":true})", {}));
  auto before = store->commit_stats();

  WriteLock lock(tmp.path());
  // The first writer becomes the leader and waits for the lock (busy_timeout 5 s)...
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  std::string refused_finish, refused_start;
  threads.emplace_back([&] { ok += store->finish_job(ids[0], "succeeded", "", R"({"n":0})", {}) ? 1 : 0; });
  for (int i = 0; i < 1000 && store->commit_stats().committing != 1; ++i)  // the leader waits in BEGIN IMMEDIATE
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(store->commit_stats().committing, 1u);
  // ...while these queue behind it.
  for (size_t i = 1; i < ids.size(); ++i)
    threads.emplace_back([&, i] {
      ok += store->finish_job(ids[i], "succeeded", "", nlohmann::json{{"n", i}}.dump(), {}) ? 1 : 0;
    });
  threads.emplace_back([&] {
    auto again = store->finish_job(done_before, "failed", "", R"({"second":true})", {});
    refused_finish = again ? "committed" : again.error().message();
  });
  threads.emplace_back([&] {
    auto st = store->mark_running(done_before, 7, "");
    refused_start = st ? "committed" : st.error().message();
  });
  for (int i = 0; i < 1000 && store->commit_stats().queued < 13; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(store->commit_stats().queued, 13u) << "the writers did not queue behind the held lock";
  lock.release();
  for (auto& t : threads) t.join();

  EXPECT_EQ(ok, 12);
  EXPECT_EQ(refused_finish, "job '" + done_before + "' already finished");
  EXPECT_EQ(refused_start, "job '" + done_before + "' is not queued");
  auto after = store->commit_stats();
  EXPECT_EQ(after.writes - before.writes, 14u);
  EXPECT_EQ(after.batches - before.batches, 2u) << "the held write, then the 13 queued behind it together";
  EXPECT_EQ(after.largest, 13u);

  // The refused finish changed nothing: the first record stays.
  auto first = store->record(tenant, done_before);
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->json, R"({"first":true})");
  for (const auto& id : ids) {
    auto row = store->job(tenant, id);
    ASSERT_TRUE(row && *row);
    EXPECT_EQ((*row)->state, JobState::kFinished) << id;
  }
  auto report = store->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << (report->problems.empty() ? "" : report->problems[0]);
  EXPECT_EQ(report->records, 13u);
}

// Without group commit (max_batch 1) every write is a transaction of its own.
TEST(StoreGroupCommit, MaxBatchOneCommitsEveryWriteAlone) {
  TempDir tmp;
  auto store = std::move(*Store::open(tmp.path(), StoreOptions{.max_batch = 1}));
  std::string tenant = store->create_tenant("acme", {})->id;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        std::string id = new_job(*store, tenant);
        EXPECT_TRUE(store->finish_job(id, "succeeded", "", "{}", {}));
      }
    });
  for (auto& th : threads) th.join();
  auto stats = store->commit_stats();
  EXPECT_EQ(stats.writes, 160u);
  EXPECT_EQ(stats.batches, 160u);
  EXPECT_EQ(stats.largest, 1u);
  EXPECT_TRUE(store->verify()->ok);
}

// A process finishing jobs on 8 threads is SIGKILLed; every job whose
// finish_job() had returned (and been reported on a pipe) is finished, with its
// record, when the store is opened again, and the chain verifies.
TEST(StoreGroupCommit, WhatFinishJobReturnedSurvivesASigkill) {
  TempDir tmp;
  std::string tenant;
  {
    auto store = std::move(*Store::open(tmp.path()));
    tenant = store->create_tenant("acme", {})->id;
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto store = Store::open(tmp.path());
    if (!store) ::_exit(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (;;) {
          JobRow row;
          row.tenant_id = tenant;
          row.request_json = "{}";
          auto created = (*store)->create_job(row);
          if (!created) ::_exit(3);
          std::string id = created->first.id;
          if (!(*store)->finish_job(id, "succeeded", "", nlohmann::json{{"id", id}}.dump(), {})) ::_exit(4);
          std::string line = id + "\n";  // 17 bytes: one atomic pipe write
          if (::write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(5);
        }
      });
    for (auto& th : threads) th.join();
    ::_exit(0);
  }
  ::close(fds[1]);
  std::set<std::string> reported;
  std::string buffer;
  char chunk[4096];
  while (reported.size() < 300) {
    ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1))
      reported.insert(buffer.substr(0, nl));
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);  // by its pid, mid-load
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer ended before the kill: " << status;
  // Lines written before the kill but not read yet also count.
  while (true) {
    ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1))
    reported.insert(buffer.substr(0, nl));
  ::close(fds[0]);
  ASSERT_GE(reported.size(), 300u);

  auto store = std::move(*Store::open(tmp.path()));
  for (const auto& id : reported) {
    auto row = store->job(tenant, id);
    ASSERT_TRUE(row && *row) << id << " was reported finished and is gone";
    EXPECT_EQ((*row)->state, JobState::kFinished) << id;
    auto rec = store->record(tenant, id);
    ASSERT_TRUE(rec && *rec) << id;
    EXPECT_EQ(nlohmann::json::parse((*rec)->json)["id"], id);
  }
  auto report = store->verify();
  ASSERT_TRUE(report);
  EXPECT_TRUE(report->ok) << (report->problems.empty() ? "" : report->problems[0]);
  EXPECT_GE(report->records, reported.size());
}

}  // namespace
}  // namespace airlock::store
